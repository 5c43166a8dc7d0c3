/**
 * The RBAC a handler needs for its own API calls, declared beside it (`permissions` of its
 * definition) and rendered into the install's RBAC by `render --handlers`. Least privilege by
 * default: nothing unless declared, no wildcards, namespaced grants where a namespace is named.
 */

/** Verbs a handler may be granted (RBAC's resource verbs; no `*`, no escalate/bind/impersonate). */
export const PERMISSION_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;

/** One grant: the verbs on resources of API groups, optionally only some names, optionally in one namespace. */
export interface HandlerPermission {
  /** "" for the core group. */
  apiGroups: string[];
  /** e.g. `configmaps`, `deployments/scale`. */
  resources: string[];
  verbs: (typeof PERMISSION_VERBS)[number][];
  /** Only these objects (get, update, patch, delete; list and watch need a metadata.name selector). */
  resourceNames?: string[];
  /** Only in this namespace: rendered as a Role and RoleBinding there rather than cluster-wide. */
  namespace?: string;
  /** Why the handler needs it: rendered as a comment-like annotation for the reviewer. */
  reason?: string;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/** Problems with `permissions` (empty when fine), each naming the grant. */
export function permissionProblems(permissions: unknown): string[] {
  if (permissions === undefined) return [];
  if (!Array.isArray(permissions)) return ['permissions must be a list of { apiGroups, resources, verbs }'];
  const problems: string[] = [];
  permissions.forEach((grant: unknown, index) => {
    const where = `permissions[${index}]`;
    const p = grant as Partial<HandlerPermission> | null;
    if (typeof p !== 'object' || p === null) return void problems.push(`${where} must be { apiGroups, resources, verbs }`);
    for (const field of ['apiGroups', 'resources', 'verbs'] as const) {
      const list = p[field];
      if (!isStringList(list) || list.length === 0) problems.push(`${where}.${field} must list at least one value`);
      else if ((list as string[]).includes('*')) problems.push(`${where}.${field}: "*" is not granted to handlers (least privilege): list what the handler calls`);
    }
    for (const verb of isStringList(p.verbs) ? (p.verbs as string[]) : []) {
      if (verb !== '*' && !(PERMISSION_VERBS as readonly string[]).includes(verb)) problems.push(`${where}.verbs: "${verb}" is not one of ${PERMISSION_VERBS.join(', ')}`);
    }
    if (p.resourceNames !== undefined && !isStringList(p.resourceNames)) problems.push(`${where}.resourceNames must be a list of names`);
    if (p.namespace !== undefined && (typeof p.namespace !== 'string' || p.namespace === '')) problems.push(`${where}.namespace must be a namespace name`);
  });
  return problems;
}
