/**
 * RBAC as kube-apiserver's authorizer evaluates it, from the Roles, ClusterRoles and their
 * bindings it has (the store, or one kube-apiserver's informer cache of them): a request is
 * allowed when a rule of a role bound to the user (or to one of its groups) allows it, with the
 * reason kube-apiserver's RBAC authorizer gives (`RBAC: allowed by ClusterRoleBinding "x" of
 * ClusterRole "y" to User "alice"`); otherwise it has no opinion. Used for service-account users
 * and SubjectAccessReviews; system:masters is always allowed.
 */
import { isRecord, type KubeObject } from './objects.js';
import { nonResourceRuleAllows, ruleAllows, type AuthorizationRequest, type PolicyRule } from './rbac.js';
import type { UserInfo } from './identity.js';

/** Where the RBAC objects are read from: the store, or an informer cache. */
export interface RbacObjects {
  get(resource: string, namespace: string | undefined, name: string): KubeObject | undefined;
  list(resource: string, namespace?: string): KubeObject[];
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

/** A resource request, or a non-resource one (`path` set: /healthz, /metrics). */
export type RbacRequest = AuthorizationRequest | { verb: string; path: string };

export interface RbacDecision {
  allowed: boolean;
  /** Why it was allowed; empty when no rule allows it (no opinion). */
  reason: string;
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

/** kube-apiserver's describeSubject: `User "alice"`, `ServiceAccount "name/namespace"`. */
function describeSubject(subject: Subject, bindingNamespace: string | undefined): string {
  if (subject.kind === 'ServiceAccount') return `ServiceAccount "${subject.name ?? ''}/${subject.namespace ?? bindingNamespace ?? ''}"`;
  return `${subject.kind ?? ''} "${subject.name ?? ''}"`;
}

const rulesOf = (role: KubeObject | undefined): PolicyRule[] =>
  role && Array.isArray(role.rules) ? (role.rules.filter(isRecord) as unknown as PolicyRule[]) : [];

function boundRules(objects: RbacObjects, binding: KubeObject, namespace: string | undefined): PolicyRule[] {
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  const name = typeof ref.name === 'string' ? ref.name : '';
  if (ref.kind === 'ClusterRole') return rulesOf(objects.get('clusterroles', undefined, name));
  if (ref.kind === 'Role' && namespace !== undefined) return rulesOf(objects.get('roles', namespace, name));
  return [];
}

function boundSubject(binding: KubeObject, user: UserInfo): Subject | undefined {
  const subjects = Array.isArray(binding.subjects) ? (binding.subjects as Subject[]) : [];
  return subjects.find((subject) => isRecord(subject) && subjectMatches(subject, user, binding.metadata?.namespace));
}

const allows = (rule: PolicyRule, request: RbacRequest): boolean => ('path' in request ? nonResourceRuleAllows(rule, request) : ruleAllows(rule, request));

function describeBinding(binding: KubeObject, subject: Subject): string {
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  const { name = '', namespace } = binding.metadata ?? {};
  const bindingName = namespace ? `RoleBinding "${name}/${namespace ?? ''}"` : `ClusterRoleBinding "${name}"`;
  return `${bindingName} of ${String(ref.kind ?? '')} "${String(ref.name ?? '')}" to ${describeSubject(subject, namespace)}`;
}

/** ClusterRoleBindings first, then the RoleBindings of the request's namespace, as kube-apiserver's rule resolver visits them. */
export function rbacDecision(objects: RbacObjects, user: UserInfo, request: RbacRequest): RbacDecision {
  const namespace = 'path' in request ? undefined : request.namespace;
  const bindings = [...objects.list('clusterrolebindings'), ...(namespace ? objects.list('rolebindings', namespace) : [])];
  for (const binding of bindings) {
    const subject = boundSubject(binding, user);
    if (!subject) continue;
    const scope = binding.metadata?.namespace ? namespace : undefined;
    if (boundRules(objects, binding, scope).some((rule) => allows(rule, request))) return { allowed: true, reason: `RBAC: allowed by ${describeBinding(binding, subject)}` };
  }
  return { allowed: false, reason: '' };
}

export function storeAllows(objects: RbacObjects, user: UserInfo, request: AuthorizationRequest): boolean {
  return rbacDecision(objects, user, request).allowed;
}
