/**
 * The RBAC rules the rendered manifests grant the server's ServiceAccount, in the shape of
 * rbac.authorization.k8s.io/v1 PolicyRule. The manifest tests check them for least privilege;
 * the lifecycle tests feed them to the Kubernetes API test double so the server runs with
 * exactly the rights an install gives it.
 */
import { renderKustomization, type KustomizeOptions } from './kustomize.js';
import { objectsOfKind, type KubeObject } from '../../../local-cluster/util/kube-object.js';

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

export interface GrantedRules {
  serviceAccount: ServiceAccountRef;
  /** From ClusterRoles bound with ClusterRoleBindings: apply in every namespace and cluster-wide. */
  clusterRules: PolicyRule[];
  /** From Roles bound with RoleBindings, by namespace. */
  namespacedRules: Record<string, PolicyRule[]>;
}

const DEFAULT_ACCOUNT: ServiceAccountRef = { namespace: 'kube-admission-server', name: 'kube-admission-server' };

/** A Role or ClusterRole reduced to what authorization reads. */
export interface BoundRole {
  metadata: { name: string; namespace?: string };
  rules: PolicyRule[];
}

/**
 * The roles bound to a ServiceAccount, in the shape of the API test double's RBAC mode
 * (`{ user, clusterRoles, roles }`): ClusterRoles from ClusterRoleBindings apply everywhere,
 * Roles (and ClusterRoles) from RoleBindings only in the binding's namespace.
 */
export interface BoundRoles {
  user: string;
  clusterRoles: BoundRole[];
  roles: BoundRole[];
}

/** Renders `kustomizationDir` and collects the roles it binds to `serviceAccount`. */
export async function renderedRbacRoles(
  kustomizationDir: string,
  serviceAccount: ServiceAccountRef = DEFAULT_ACCOUNT,
  options: KustomizeOptions = {},
): Promise<BoundRoles> {
  return boundRoles(await renderKustomization(kustomizationDir, options), serviceAccount);
}

/** Renders `kustomizationDir` and collects the rules it grants `serviceAccount`. */
export async function renderedRbacRules(
  kustomizationDir: string,
  serviceAccount: ServiceAccountRef = DEFAULT_ACCOUNT,
  options: KustomizeOptions = {},
): Promise<GrantedRules> {
  return grantedRules(await renderKustomization(kustomizationDir, options), serviceAccount);
}

export function boundRoles(objects: readonly KubeObject[], serviceAccount: ServiceAccountRef): BoundRoles {
  const clusterRoles: BoundRole[] = [];
  const roles: BoundRole[] = [];
  for (const binding of objectsOfKind(objects, 'ClusterRoleBinding')) {
    if (!bindsServiceAccount(binding, serviceAccount)) continue;
    const ref = roleRefOf(binding);
    clusterRoles.push({ metadata: { name: ref.name }, rules: rulesOfRole(objects, ref, undefined) });
  }
  for (const binding of objectsOfKind(objects, 'RoleBinding')) {
    if (!bindsServiceAccount(binding, serviceAccount)) continue;
    const namespace = binding.metadata.namespace ?? '';
    const ref = roleRefOf(binding);
    roles.push({ metadata: { name: ref.name, namespace }, rules: rulesOfRole(objects, ref, namespace) });
  }
  return { user: `system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}`, clusterRoles, roles };
}

export function grantedRules(objects: readonly KubeObject[], serviceAccount: ServiceAccountRef): GrantedRules {
  const bound = boundRoles(objects, serviceAccount);
  const namespacedRules: Record<string, PolicyRule[]> = {};
  for (const role of bound.roles) (namespacedRules[role.metadata.namespace ?? ''] ??= []).push(...role.rules);
  return { serviceAccount, clusterRules: bound.clusterRoles.flatMap((r) => r.rules), namespacedRules };
}

interface RoleRef {
  kind: string;
  name: string;
}

function roleRefOf(binding: KubeObject): RoleRef {
  const ref = binding['roleRef'] as Partial<RoleRef> | undefined;
  if (!ref?.kind || !ref.name) throw new Error(`${binding.kind} ${binding.metadata.name} has no roleRef`);
  return { kind: ref.kind, name: ref.name };
}

function bindsServiceAccount(binding: KubeObject, account: ServiceAccountRef): boolean {
  const subjects = (binding['subjects'] as Array<Record<string, string>> | undefined) ?? [];
  return subjects.some((s) => s['kind'] === 'ServiceAccount' && s['name'] === account.name && s['namespace'] === account.namespace);
}

/** A RoleBinding may refer to a Role in its namespace or to a ClusterRole (then scoped to the namespace). */
function rulesOfRole(objects: readonly KubeObject[], ref: RoleRef, namespace: string | undefined): PolicyRule[] {
  const role = objects.find(
    (o) => o.kind === ref.kind && o.metadata.name === ref.name && (ref.kind === 'ClusterRole' || o.metadata.namespace === namespace),
  );
  if (!role) throw new Error(`binding refers to ${ref.kind} ${ref.name}, which the manifests do not contain`);
  return ((role['rules'] as PolicyRule[] | undefined) ?? []).map(copyRule);
}

function copyRule(rule: PolicyRule): PolicyRule {
  const copy: PolicyRule = { apiGroups: [...rule.apiGroups], resources: [...rule.resources], verbs: [...rule.verbs] };
  if (rule.resourceNames) copy.resourceNames = [...rule.resourceNames];
  return copy;
}
