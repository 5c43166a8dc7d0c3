/**
 * The reports benchmark's inputs: the shipped policy (manifests/base/policy.yaml) plus 25 cel
 * rules on Pods, and Pods across namespaces, every tenth with a finding or two.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import type { KubeObject } from '../src/admission/types.js';
import { toolsPods } from './tools-workload.js';

const PODS = '[{ operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]';

/** 25 rules of the shapes people port from ValidatingAdmissionPolicies: [name, validation]. */
const CEL_RULES: [string, string][] = [
  ['memory-limits', "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && 'memory' in c.resources.limits)"],
  ['cpu-requests', "object.spec.containers.all(c, has(c.resources) && has(c.resources.requests) && 'cpu' in c.resources.requests)"],
  ['max-memory', "object.spec.containers.all(c, !has(c.resources.limits) || !('memory' in c.resources.limits) || !quantity(c.resources.limits.memory).isGreaterThan(quantity('4Gi')))"],
  ['no-latest', "object.spec.containers.all(c, !c.image.endsWith(':latest'))"],
  ['pinned', "object.spec.containers.all(c, c.image.contains('@') || c.image.contains(':'))"],
  ['run-as-non-root', 'has(object.spec.securityContext) && has(object.spec.securityContext.runAsNonRoot) && object.spec.securityContext.runAsNonRoot'],
  ['no-privilege-escalation', 'object.spec.containers.all(c, has(c.securityContext) && has(c.securityContext.allowPrivilegeEscalation) && !c.securityContext.allowPrivilegeEscalation)'],
  ['drop-all', "object.spec.containers.all(c, has(c.securityContext) && has(c.securityContext.capabilities) && has(c.securityContext.capabilities.drop) && 'ALL' in c.securityContext.capabilities.drop)"],
  ['read-only-root', 'object.spec.containers.all(c, c.?securityContext.?readOnlyRootFilesystem.orValue(false))'],
  ['team-label', "has(object.metadata.labels) && 'team' in object.metadata.labels"],
  ['app-label-format', "!has(object.metadata.labels) || !('app' in object.metadata.labels) || object.metadata.labels.app.matches('^[a-z][a-z0-9-]*$')"],
  ['no-host-path', '!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath))'],
  ['no-host-ports', 'object.spec.containers.all(c, !has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0))'],
  ['seccomp', "object.spec.?securityContext.?seccompProfile.?type.orValue('') in ['RuntimeDefault', 'Localhost']"],
  ['max-containers', 'size(object.spec.containers) <= 5'],
  ['probes', 'object.spec.containers.all(c, has(c.readinessProbe))'],
  ['no-default-sa', "object.spec.?serviceAccountName.orValue('default') != 'default'"],
  ['image-registry', "object.spec.containers.all(c, c.image.startsWith('registry.example/') || c.image.startsWith('ghcr.io/'))"],
  ['annotations-size', '!has(object.metadata.annotations) || size(object.metadata.annotations) < 20'],
  ['no-host-network', '!object.spec.?hostNetwork.orValue(false)'],
  ['no-host-pid', '!object.spec.?hostPID.orValue(false)'],
  ['no-host-ipc', '!object.spec.?hostIPC.orValue(false)'],
  ['no-sys-admin', "object.spec.containers.all(c, !c.?securityContext.?capabilities.?add.orValue([]).exists(a, a == 'SYS_ADMIN'))"],
  ['cpu-limits-bounded', "object.spec.containers.all(c, !has(c.resources.limits) || !('cpu' in c.resources.limits) || !quantity(c.resources.limits.cpu).isGreaterThan(quantity('4')))"],
  ['named-ports', 'object.spec.containers.all(c, !has(c.ports) || c.ports.all(p, p.containerPort > 0))'],
];

export const CEL_RULE_COUNT = CEL_RULES.length;

/** The shipped policy with the 25 cel rules (mode warn) after its own entries. */
export async function reportsPolicy(): Promise<string> {
  const shipped = await readFile(join(repositoryRoot(), 'manifests', 'base', 'policy.yaml'), 'utf8');
  const cel = CEL_RULES.map(
    ([name, expression]) => `  - name: ${name}
    kind: cel
    mode: warn
    rules: ${PODS}
    validations:
      - expression: ${JSON.stringify(expression)}
        message: ${name} is not met`,
  );
  return `${shipped.trimEnd()}\n${cel.join('\n')}\n`;
}

/** `n` Pods in `namespaces` namespaces (`ns-<i>`), uids and resourceVersions left to the store. */
export function reportsPods(n: number, namespaces: number): KubeObject[] {
  return toolsPods(n, namespaces);
}

/** A Pod that breaks deny-privileged (and no-privilege-escalation), to time its result into a report. */
export function violatingPod(name: string, namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'bad', team: 'shop' } },
    spec: { serviceAccountName: 'web', containers: [{ name: 'root', image: 'registry.example/root:1', securityContext: { privileged: true } }] },
  };
}
