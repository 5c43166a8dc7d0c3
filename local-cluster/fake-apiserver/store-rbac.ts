/**
 * RBAC as kube-apiserver's authorizer evaluates it, from the Roles, ClusterRoles and their
 * bindings in the store: a request is allowed when a rule of a role bound to the user (or to one
 * of its groups) allows it. Used for service-account users; system:masters is always allowed.
 */
import { isRecord, type KubeObject } from './objects.js';
import { ruleAllows, type AuthorizationRequest, type PolicyRule } from './rbac.js';
import type { UserInfo } from './identity.js';
import type { ObjectStore } from './store.js';

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

function subjectMatches(subject: Subject, user: UserInfo, bindingNamespace: string | undefined): boolean {
  const username = user.username ?? '';
  switch (subject.kind) {
    case 'User':
      return subject.name === username;
    case 'Group':
      return (user.groups ?? []).includes(subject.name ?? '');
    case 'ServiceAccount':
      return username === `system:serviceaccount:${subject.namespace ?? bindingNamespace ?? ''}:${subject.name ?? ''}`;
    default:
      return false;
  }
}

const rulesOf = (role: KubeObject | undefined): PolicyRule[] =>
  role && Array.isArray(role.rules) ? (role.rules.filter(isRecord) as unknown as PolicyRule[]) : [];

function boundRules(store: ObjectStore, binding: KubeObject, namespace: string | undefined): PolicyRule[] {
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  const name = typeof ref.name === 'string' ? ref.name : '';
  if (ref.kind === 'ClusterRole') return rulesOf(store.get('clusterroles', undefined, name));
  if (ref.kind === 'Role' && namespace !== undefined) return rulesOf(store.get('roles', namespace, name));
  return [];
}

function bindsUser(binding: KubeObject, user: UserInfo): boolean {
  const subjects = Array.isArray(binding.subjects) ? (binding.subjects as Subject[]) : [];
  return subjects.some((subject) => isRecord(subject) && subjectMatches(subject, user, binding.metadata?.namespace));
}

export function storeAllows(store: ObjectStore, user: UserInfo, request: AuthorizationRequest): boolean {
  for (const binding of store.list('clusterrolebindings')) {
    if (bindsUser(binding, user) && boundRules(store, binding, undefined).some((rule) => ruleAllows(rule, request))) return true;
  }
  if (request.namespace === undefined) return false;
  for (const binding of store.list('rolebindings', request.namespace)) {
    if (bindsUser(binding, user) && boundRules(store, binding, request.namespace).some((rule) => ruleAllows(rule, request))) return true;
  }
  return false;
}
