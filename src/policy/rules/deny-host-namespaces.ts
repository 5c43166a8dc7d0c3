import { containersOf, describeContainer, isRecord, podSpecsOf } from '../../admission/pod-specs.js';
import { podAndWorkloadRules, type RuleKind } from '../rule-kind.js';
import type { KubeObject } from '../../admission/types.js';
import { optional, type YamlField } from '../../util/yaml-field.js';

/** true = deny. */
export interface DenyHostNamespacesParams {
  hostNetwork: boolean;
  hostPID: boolean;
  hostIPC: boolean;
  /** Container ports with a hostPort (default false: host ports allowed). */
  hostPorts: boolean;
}

const NAMESPACE_FIELDS = ['hostNetwork', 'hostPID', 'hostIPC'] as const;

function hostPortsOf(container: Record<string, unknown>): number[] {
  const ports = container['ports'];
  if (!Array.isArray(ports)) return [];
  return ports.flatMap((port: unknown) => (isRecord(port) && typeof port['hostPort'] === 'number' && port['hostPort'] > 0 ? [port['hostPort']] : []));
}

/** Pods that share the node's network, PID or IPC namespace, or bind host ports. */
export function checkHostNamespaces(object: KubeObject, params: DenyHostNamespacesParams): string[] {
  const findings: string[] = [];
  for (const location of podSpecsOf(object)) {
    const where = location.description || 'pod';
    for (const field of NAMESPACE_FIELDS) {
      if (params[field] && location.spec[field] === true) findings.push(`${where} sets ${field}: true; sharing the host's namespaces is not allowed`);
    }
    if (!params.hostPorts) continue;
    for (const ref of containersOf(location.spec)) {
      const ports = hostPortsOf(ref.container);
      if (ports.length > 0) findings.push(`${describeContainer(ref, location)} uses hostPort ${ports.join(', ')}; host ports are not allowed (use a Service)`);
    }
  }
  return findings;
}

export const denyHostNamespaces: RuleKind = {
  kind: 'denyHostNamespaces',
  type: 'validating',
  defaultRules: podAndWorkloadRules(),
  compile(params) {
    const fields = params ? params.map([...NAMESPACE_FIELDS, 'hostPorts']) : new Map<string, YamlField>();
    if (!fields) return undefined;
    const hostNetwork = optional(fields, 'hostNetwork', (f) => f.boolean(), true);
    const hostPID = optional(fields, 'hostPID', (f) => f.boolean(), true);
    const hostIPC = optional(fields, 'hostIPC', (f) => f.boolean(), true);
    const hostPorts = optional(fields, 'hostPorts', (f) => f.boolean(), false);
    if (hostNetwork === undefined || hostPID === undefined || hostIPC === undefined || hostPorts === undefined) return undefined;
    const bound: DenyHostNamespacesParams = { hostNetwork, hostPID, hostIPC, hostPorts };
    return { type: 'validating', check: (object) => checkHostNamespaces(object, bound) };
  },
};
