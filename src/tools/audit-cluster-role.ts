import { stringify } from 'yaml';
import type { DiscoveredResource } from '../kube/discovery.js';

/** The read-only ClusterRole audit needs for `targets`: list on them and on namespaces, nothing else. */
export function auditClusterRole(targets: readonly DiscoveredResource[], name = 'kube-admission-server-audit'): string {
  const byGroup = new Map<string, Set<string>>([['', new Set(['namespaces'])]]);
  for (const target of targets) {
    const resources = byGroup.get(target.group) ?? new Set<string>();
    resources.add(target.resource);
    byGroup.set(target.group, resources);
  }
  const rules = [...byGroup.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({ apiGroups: [group], resources: [...resources].sort(), verbs: ['list'] }));
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: { 'app.kubernetes.io/name': 'kube-admission-server', 'app.kubernetes.io/component': 'audit' } },
    rules,
  };
  return stringify(role);
}
