/**
 * The RBAC rules the rendered manifests grant the server's ServiceAccount, in the shape of
 * rbac.authorization.k8s.io/v1 PolicyRule. The manifest tests check them for least privilege;
 * the lifecycle tests feed them to the Kubernetes API test double so the server runs with
 * exactly the rights an install gives it.
 */
import { renderKustomization, type RenderOptions } from './kustomize.js';
import { objectsOfKind, type KubeObject } from './kube-object.js';

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

/** Renders `kustomizationDir` and collects what it grants `serviceAccount`. */
export async function renderedRbacRules(
  kustomizationDir: string,
  serviceAccount: ServiceAccountRef = { namespace: 'kube-admission-server', name: 'kube-admission-server' },
  options: RenderOptions = {},
): Promise<GrantedRules> {
  return grantedRules(await renderKustomization(kustomizationDir, options), serviceAccount);
}

export function grantedRules(objects: readonly KubeObject[], serviceAccount: ServiceAccountRef): GrantedRules {
  const clusterRules: PolicyRule[] = [];
  const namespacedRules: Record<string, PolicyRule[]> = {};
  for (const binding of objectsOfKind(objects, 'ClusterRoleBinding')) {
    if (!bindsServiceAccount(binding, serviceAccount)) continue;
    clusterRules.push(...rulesOfRole(objects, roleRefOf(binding), undefined));
  }
  for (const binding of objectsOfKind(objects, 'RoleBinding')) {
    if (!bindsServiceAccount(binding, serviceAccount)) continue;
    const namespace = binding.metadata.namespace ?? '';
    const rules = rulesOfRole(objects, roleRefOf(binding), namespace);
    (namespacedRules[namespace] ??= []).push(...rules);
  }
  return { serviceAccount, clusterRules, namespacedRules };
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
