import type { KubeObject } from '../admission/types.js';

/** One RBAC rule as a Role or ClusterRole writes it. */
export interface RbacRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** Who a rendered role is bound to: the server's ServiceAccount. */
export interface RbacSubject {
  /** The server's namespace, where its ServiceAccount lives. */
  namespace: string;
  serviceAccount: string;
}

/** A Role (with its namespace) or ClusterRole, labelled for the part of the install that needs it. */
export function rbacRole(
  kind: 'ClusterRole' | 'Role',
  name: string,
  namespace: string | undefined,
  rules: RbacRule[],
  labels: Record<string, string>,
  annotations?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), labels, ...(annotations ? { annotations } : {}) },
    rules,
  };
}

/** The binding of the role of the same name to the server's ServiceAccount. */
export function rbacBinding(kind: 'ClusterRoleBinding' | 'RoleBinding', name: string, namespace: string | undefined, subject: RbacSubject, labels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: kind === 'ClusterRoleBinding' ? 'ClusterRole' : 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name: subject.serviceAccount, namespace: subject.namespace }],
  };
}
