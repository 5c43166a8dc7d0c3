import type { PolicyEntry } from '../policy/policy.js';
import { nativeObstacles } from '../policy/engine.js';
import type { KubeObject } from '../admission/types.js';
import { nativePolicyName } from './native-policy-objects.js';
import { rbacBinding, rbacRole, type RbacRule, type RbacSubject } from './rbac-objects.js';

/** Where the native policies' RBAC goes: named after the install, bound to the server's ServiceAccount. */
export interface NativeRbacTarget extends RbacSubject {
  /** The install's name (the configurations' name): the roles are `<name>-native-policies`. */
  configName: string;
}

const LABELS = { 'app.kubernetes.io/name': 'kube-admission-server', 'app.kubernetes.io/component': 'native-policies' };
const POLICY_RESOURCES = ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'];
const MUTATING_POLICY_RESOURCES = ['mutatingadmissionpolicies', 'mutatingadmissionpolicybindings'];

/** Entries the leader may register inside kube-apiserver: `native`, and `auto` wherever the cluster serves the API. */
export function mayGoNative(entry: PolicyEntry): boolean {
  return (entry.engine === 'native' || entry.engine === 'auto') && nativeObstacles(entry).length === 0;
}

/**
 * The rights the leader needs for the native policy objects of `entries`, the same the Helm chart
 * grants: `create` (which RBAC cannot restrict by name: the name is in the body) and `list`,
 * `watch` (which select this install's objects by label) on the policies and bindings, `get`,
 * `update`, `delete` on exactly each entry's (Validating for cel entries, Mutating for
 * defaultLabels entries, each kind only when some entry needs it); in the server's namespace the same for the params
 * ConfigMaps of entries with params. Nothing when no entry may go native.
 */
export function nativeRbacObjects(entries: readonly PolicyEntry[], target: NativeRbacTarget): KubeObject[] {
  const native = entries.filter(mayGoNative);
  if (native.length === 0) return [];
  const paramsNames = native.filter((entry) => entry.native?.params !== undefined).map((entry) => `${nativePolicyName(entry, target)}-params`);
  // Each kind of policy gets rights on its own objects only: a name granted for a VAP is no MAP's.
  const rulesFor = (resources: string[], names: string[]): RbacRule[] =>
    names.length === 0
      ? []
      : [
          { apiGroups: ['admissionregistration.k8s.io'], resources, verbs: ['create', 'list', 'watch'] },
          { apiGroups: ['admissionregistration.k8s.io'], resources, resourceNames: names, verbs: ['get', 'update', 'delete'] },
        ];
  const clusterRules: RbacRule[] = [
    ...rulesFor(POLICY_RESOURCES, native.filter((entry) => !entry.nativeMutation).map((entry) => nativePolicyName(entry, target))),
    ...rulesFor(MUTATING_POLICY_RESOURCES, native.filter((entry) => entry.nativeMutation).map((entry) => nativePolicyName(entry, target))),
  ];
  const namespaceRules: RbacRule[] = [
    { apiGroups: [''], resources: ['configmaps'], verbs: paramsNames.length > 0 ? ['create', 'list', 'watch'] : ['list', 'watch'] },
    ...(paramsNames.length > 0 ? [{ apiGroups: [''], resources: ['configmaps'], resourceNames: paramsNames, verbs: ['get', 'update', 'delete'] }] : []),
  ];
  const name = `${target.configName}-native-policies`;
  // The params ConfigMaps are watched for ValidatingAdmissionPolicies only: a MAP-only policy needs no Role.
  const validating = native.some((entry) => !entry.nativeMutation);
  return [
    rbacRole('ClusterRole', name, undefined, clusterRules, LABELS),
    rbacBinding('ClusterRoleBinding', name, undefined, target, LABELS),
    ...(validating ? [rbacRole('Role', name, target.namespace, namespaceRules, LABELS), rbacBinding('RoleBinding', name, target.namespace, target, LABELS)] : []),
  ];
}
