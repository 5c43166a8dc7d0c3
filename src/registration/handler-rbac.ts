import type { HandlerPermission } from '../admission/handler-permissions.js';
import type { KubeObject, Webhook } from '../admission/types.js';
import { rbacBinding, rbacRole, type RbacRule, type RbacSubject } from './rbac-objects.js';

/** Where the handlers' RBAC goes: named after the install, bound to the server's ServiceAccount. */
export interface HandlerRbacTarget extends RbacSubject {
  /** The install's name (the configurations' name): the roles are `<name>-handlers`. */
  name: string;
}

function ruleOf(permission: HandlerPermission): RbacRule {
  const rule: RbacRule = { apiGroups: [...permission.apiGroups], resources: [...permission.resources], verbs: [...permission.verbs] };
  if (permission.resourceNames && permission.resourceNames.length > 0) rule.resourceNames = [...permission.resourceNames];
  return rule;
}

/** The annotation that says which webhook asked for which grant, and why. */
export const GRANTED_FOR = 'kube-admission-server.io/granted-for';

const LABELS = { 'app.kubernetes.io/name': 'kube-admission-server', 'app.kubernetes.io/component': 'custom-handlers' };

/**
 * The RBAC the handlers declared (`permissions`), for the server's ServiceAccount: a ClusterRole
 * and binding for grants without a namespace, a Role and RoleBinding in each namespace named.
 * Nothing when no handler declared any: least privilege by default. Identical rules appear once;
 * each role's annotation says which webhook asked for what.
 */
export function handlerRbacObjects(webhooks: readonly Webhook[], target: HandlerRbacTarget): KubeObject[] {
  const scopes = new Map<string, { rules: RbacRule[]; seen: Set<string>; why: string[] }>();
  for (const webhook of webhooks) {
    for (const permission of webhook.permissions ?? []) {
      const scope = permission.namespace ?? '';
      const entry = scopes.get(scope) ?? { rules: [], seen: new Set<string>(), why: [] };
      scopes.set(scope, entry);
      const rule = ruleOf(permission);
      const key = JSON.stringify(rule);
      if (!entry.seen.has(key)) {
        entry.seen.add(key);
        entry.rules.push(rule);
      }
      entry.why.push(`${webhook.name}: ${permission.verbs.join(',')} ${permission.resources.join(',')}${permission.reason ? ` (${permission.reason})` : ''}`);
    }
  }
  const name = `${target.name}-handlers`;
  const objects: KubeObject[] = [];
  for (const [namespace, { rules, why }] of [...scopes].sort(([a], [b]) => a.localeCompare(b))) {
    const annotations = { [GRANTED_FOR]: why.join('; ') };
    if (namespace === '') objects.push(rbacRole('ClusterRole', name, undefined, rules, LABELS, annotations), rbacBinding('ClusterRoleBinding', name, undefined, target, LABELS));
    else objects.push(rbacRole('Role', name, namespace, rules, LABELS, annotations), rbacBinding('RoleBinding', name, namespace, target, LABELS));
  }
  return objects;
}
