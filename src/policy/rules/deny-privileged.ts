import { containersOf, describeContainer, isRecord, podSpecsOf } from '../../admission/pod-specs.js';
import { containerRules, type RuleKind } from '../rule-kind.js';
import type { KubeObject } from '../../admission/types.js';
import { optional, type YamlField } from '../../util/yaml-field.js';

export interface DenyPrivilegedParams {
  /** Also deny `allowPrivilegeEscalation: true` (default true). */
  allowPrivilegeEscalation: boolean;
  /** Capabilities that may not be added, e.g. SYS_ADMIN, NET_ADMIN, ALL (default none). */
  deniedCapabilities: string[];
}

/** "cap_sys_admin" and "SYS_ADMIN" name the same capability; the container runtime adds the prefix. */
export function normalizeCapability(name: string): string {
  return name.toUpperCase().replace(/^CAP_/, '');
}

function addedCapabilities(securityContext: Record<string, unknown>): string[] {
  const capabilities = securityContext['capabilities'];
  if (!isRecord(capabilities) || !Array.isArray(capabilities['add'])) return [];
  return capabilities['add'].filter((c): c is string => typeof c === 'string');
}

/** Privileged containers, privilege escalation and denied capabilities, in every container kind. */
export function checkPrivileged(object: KubeObject, params: DenyPrivilegedParams): string[] {
  const denied = new Set(params.deniedCapabilities.map(normalizeCapability));
  const findings: string[] = [];
  for (const location of podSpecsOf(object)) {
    for (const ref of containersOf(location.spec)) {
      const securityContext = ref.container['securityContext'];
      if (!isRecord(securityContext)) continue;
      const who = describeContainer(ref, location);
      if (securityContext['privileged'] === true) {
        findings.push(`${who} sets securityContext.privileged: true; privileged containers are not allowed (remove it or set false)`);
      }
      if (params.allowPrivilegeEscalation && securityContext['allowPrivilegeEscalation'] === true) {
        findings.push(`${who} sets securityContext.allowPrivilegeEscalation: true; not allowed (remove it or set false)`);
      }
      const refused = addedCapabilities(securityContext).filter((c) => denied.has(normalizeCapability(c)));
      if (refused.length > 0) {
        findings.push(`${who} adds capabilities ${refused.join(', ')}; not allowed (denied: ${[...denied].join(', ')})`);
      }
    }
  }
  return findings;
}

const CAPABILITY = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const denyPrivileged: RuleKind = {
  kind: 'denyPrivileged',
  type: 'validating',
  defaultRules: containerRules(),
  compile(params) {
    const fields = params ? params.map(['allowPrivilegeEscalation', 'deniedCapabilities']) : new Map<string, YamlField>();
    if (!fields) return undefined;
    const allowPrivilegeEscalation = optional(fields, 'allowPrivilegeEscalation', (f) => f.boolean(), true);
    const deniedCapabilities = optional(
      fields,
      'deniedCapabilities',
      (f) => f.stringList((c) => (CAPABILITY.test(c) ? undefined : `"${c}" is not a capability name such as SYS_ADMIN`)),
      [],
    );
    if (allowPrivilegeEscalation === undefined || deniedCapabilities === undefined) return undefined;
    const bound: DenyPrivilegedParams = { allowPrivilegeEscalation, deniedCapabilities };
    return { type: 'validating', check: (object) => checkPrivileged(object, bound) };
  },
};
