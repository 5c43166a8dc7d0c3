/**
 * RBAC mode: the rules of Roles and ClusterRoles as the manifests ship them, assumed bound to the
 * caller. ClusterRole rules apply everywhere, Role rules only in their own namespace. Anything
 * no rule allows is denied with 403.
 */

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface RoleLike {
  metadata?: { name?: string; namespace?: string };
  rules?: PolicyRule[];
}

export interface RbacPolicy {
  /** The user named in 403 messages; default `system:serviceaccount:default:kube-admission-server`. */
  user?: string;
  clusterRoles?: RoleLike[];
  /** Namespaced Roles: each must carry metadata.namespace. */
  roles?: RoleLike[];
}

export interface AuthorizationRequest {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export const DEFAULT_RBAC_USER = 'system:serviceaccount:default:kube-admission-server';

const matches = (allowed: string[] | undefined, value: string): boolean =>
  (allowed ?? []).some((entry) => entry === '*' || entry === value);

function resourceMatches(allowed: string[] | undefined, resource: string, subresource: string | undefined): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (allowed ?? []).some(
    (entry) => entry === '*' || entry === combined || (subresource !== undefined && entry === `*/${subresource}`),
  );
}

export function ruleAllows(rule: PolicyRule, request: AuthorizationRequest): boolean {
  if (!matches(rule.verbs, request.verb)) return false;
  if (!matches(rule.apiGroups, request.group)) return false;
  if (!resourceMatches(rule.resources, request.resource, request.subresource)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (request.name !== undefined && names.includes(request.name));
}

export function isAllowed(policy: RbacPolicy, request: AuthorizationRequest): boolean {
  const clusterWide = (policy.clusterRoles ?? []).some((role) => (role.rules ?? []).some((r) => ruleAllows(r, request)));
  if (clusterWide) return true;
  if (request.namespace === undefined) return false;
  return (policy.roles ?? []).some(
    (role) => role.metadata?.namespace === request.namespace && (role.rules ?? []).some((r) => ruleAllows(r, request)),
  );
}

/** kube-apiserver's NonResourceURLMatches: `*`, an exact path, or a prefix ending in `*`. */
export function nonResourceRuleAllows(rule: PolicyRule, request: { verb: string; path: string }): boolean {
  if (!matches(rule.verbs, request.verb)) return false;
  return (rule.nonResourceURLs ?? []).some((url) => url === '*' || url === request.path || (url.endsWith('*') && request.path.startsWith(url.slice(0, -1))));
}
