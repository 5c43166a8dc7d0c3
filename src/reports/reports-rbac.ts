import type { KubeObject, Webhook } from '../admission/types.js';
import type { PolicyEntry } from '../policy/policy.js';
import { rbacBinding, rbacRole, type RbacRule, type RbacSubject } from '../registration/rbac-objects.js';
import type { ReportApi } from './report-api.js';
import { reportedRules, reportedWebhooks } from './reported-rules.js';

/** Where the background audit's RBAC goes: named after the install, bound to the server's ServiceAccount. */
export interface ReportsRbacTarget extends RbacSubject {
  /** The install's name (the configurations'): the role is `<name>-reports`. */
  configName: string;
}

/** What the audit does besides listing: write reports (objects mode) and Events. */
export interface ReportsRbacOptions {
  /** Undefined: no report objects (the gauge and logs only). */
  api: ReportApi | undefined;
  events: boolean;
}

const LABELS = { 'app.kubernetes.io/name': 'kube-admission-server', 'app.kubernetes.io/component': 'reports' };

/** `pods/ephemeralcontainers` lists as `pods`, `*\/*` as `*`: RBAC grants list on the resource. */
const listedResource = (resource: string): string => resource.split('/')[0] ?? resource;

/**
 * The rights the background audit needs for `entries`, the same the Helm chart grants: list and
 * watch on exactly the resources the reported rules name (per API group, wildcards as written)
 * and on Namespaces (selectors and namespaceObject); create, get, list, update and delete on the
 * report kinds; create on Events when they are sent. One ClusterRole `<name>-reports` and its
 * binding; nothing when no rule is reported.
 */
export function reportsRbacObjects(entries: readonly PolicyEntry[], webhooks: readonly Webhook[], target: ReportsRbacTarget, options: ReportsRbacOptions): KubeObject[] {
  const reported = reportedWebhooks(webhooks, reportedRules(entries, webhooks));
  if (reported.length === 0) return [];
  const byGroup = new Map<string, Set<string>>([['', new Set(['namespaces'])]]);
  for (const rule of reported.flatMap((webhook) => webhook.rules)) {
    for (const group of rule.apiGroups) {
      const resources = byGroup.get(group) ?? new Set<string>();
      for (const resource of rule.resources) resources.add(listedResource(resource));
      byGroup.set(group, resources);
    }
  }
  const rules: RbacRule[] = [...byGroup.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([group, resources]) => ({ apiGroups: [group], resources: [...resources].sort(), verbs: ['list', 'watch'] }));
  if (options.api) rules.push({ apiGroups: [options.api.group], resources: [options.api.cluster.resource, options.api.namespaced.resource].sort(), verbs: ['create', 'delete', 'get', 'list', 'update'] });
  if (options.events) rules.push({ apiGroups: [''], resources: ['events'], verbs: ['create'] });
  const name = `${target.configName}-reports`;
  return [rbacRole('ClusterRole', name, undefined, rules, LABELS), rbacBinding('ClusterRoleBinding', name, undefined, target, LABELS)];
}
