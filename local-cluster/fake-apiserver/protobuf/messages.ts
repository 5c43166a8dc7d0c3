/**
 * The protobuf messages the double decodes, written from the field numbers published in
 * k8s.io/apimachinery (pkg/apis/meta/v1, pkg/runtime) and k8s.io/api (core/v1, rbac/v1)
 * generated.proto: the kinds that typed clients write as protobuf (Helm's release Secrets,
 * `kubectl create secret|configmap|namespace|serviceaccount|role|rolebinding|clusterrole|
 * clusterrolebinding`), and the DeleteOptions they send with a delete (`helm uninstall`). Each
 * message lists every field its proto declares.
 */

export type ScalarType = 'string' | 'bytes' | 'bool' | 'int32' | 'int64';

export type FieldType =
  | ScalarType
  /** A nested message by name; `Time` and `FieldsV1` have JSON forms of their own. */
  | { message: string }
  | { map: 'string' | 'bytes' };

export interface FieldDefinition {
  name: string;
  type: FieldType;
  repeated?: true;
}

export type MessageDefinition = Readonly<Record<number, FieldDefinition>>;

const str = (name: string): FieldDefinition => ({ name, type: 'string' });
const strings = (name: string): FieldDefinition => ({ name, type: 'string', repeated: true });
const msg = (name: string, message: string): FieldDefinition => ({ name, type: { message } });
const msgs = (name: string, message: string): FieldDefinition => ({ name, type: { message }, repeated: true });

export const MESSAGES: Readonly<Record<string, MessageDefinition>> = {
  // k8s.io.apimachinery.pkg.runtime
  Unknown: { 1: msg('typeMeta', 'RuntimeTypeMeta'), 2: { name: 'raw', type: 'bytes' }, 3: str('contentEncoding'), 4: str('contentType') },
  RuntimeTypeMeta: { 1: str('apiVersion'), 2: str('kind') },
  // k8s.io.apimachinery.pkg.apis.meta.v1
  ObjectMeta: {
    1: str('name'),
    2: str('generateName'),
    3: str('namespace'),
    4: str('selfLink'),
    5: str('uid'),
    6: str('resourceVersion'),
    7: { name: 'generation', type: 'int64' },
    8: msg('creationTimestamp', 'Time'),
    9: msg('deletionTimestamp', 'Time'),
    10: { name: 'deletionGracePeriodSeconds', type: 'int64' },
    11: { name: 'labels', type: { map: 'string' } },
    12: { name: 'annotations', type: { map: 'string' } },
    13: msgs('ownerReferences', 'OwnerReference'),
    14: strings('finalizers'),
    17: msgs('managedFields', 'ManagedFieldsEntry'),
  },
  OwnerReference: { 5: str('apiVersion'), 1: str('kind'), 3: str('name'), 4: str('uid'), 6: { name: 'controller', type: 'bool' }, 7: { name: 'blockOwnerDeletion', type: 'bool' } },
  ManagedFieldsEntry: { 1: str('manager'), 2: str('operation'), 3: str('apiVersion'), 4: msg('time', 'Time'), 6: str('fieldsType'), 7: msg('fieldsV1', 'FieldsV1'), 8: str('subresource') },
  DeleteOptions: {
    1: { name: 'gracePeriodSeconds', type: 'int64' },
    2: msg('preconditions', 'Preconditions'),
    3: { name: 'orphanDependents', type: 'bool' },
    4: str('propagationPolicy'),
    5: strings('dryRun'),
    6: { name: 'ignoreStoreReadErrorWithClusterBreakingPotential', type: 'bool' },
  },
  Preconditions: { 1: str('uid'), 2: str('resourceVersion') },
  LabelSelector: { 1: { name: 'matchLabels', type: { map: 'string' } }, 2: msgs('matchExpressions', 'LabelSelectorRequirement') },
  LabelSelectorRequirement: { 1: str('key'), 2: str('operator'), 3: strings('values') },
  // k8s.io.api.core.v1
  Secret: { 1: msg('metadata', 'ObjectMeta'), 5: { name: 'immutable', type: 'bool' }, 2: { name: 'data', type: { map: 'bytes' } }, 4: { name: 'stringData', type: { map: 'string' } }, 3: str('type') },
  ConfigMap: { 1: msg('metadata', 'ObjectMeta'), 4: { name: 'immutable', type: 'bool' }, 2: { name: 'data', type: { map: 'string' } }, 3: { name: 'binaryData', type: { map: 'bytes' } } },
  Namespace: { 1: msg('metadata', 'ObjectMeta'), 2: msg('spec', 'NamespaceSpec'), 3: msg('status', 'NamespaceStatus') },
  NamespaceSpec: { 1: strings('finalizers') },
  NamespaceStatus: { 1: str('phase'), 2: msgs('conditions', 'NamespaceCondition') },
  NamespaceCondition: { 1: str('type'), 2: str('status'), 4: msg('lastTransitionTime', 'Time'), 5: str('reason'), 6: str('message') },
  ServiceAccount: { 1: msg('metadata', 'ObjectMeta'), 2: msgs('secrets', 'ObjectReference'), 3: msgs('imagePullSecrets', 'LocalObjectReference'), 4: { name: 'automountServiceAccountToken', type: 'bool' } },
  ObjectReference: { 1: str('kind'), 2: str('namespace'), 3: str('name'), 4: str('uid'), 5: str('apiVersion'), 6: str('resourceVersion'), 7: str('fieldPath') },
  LocalObjectReference: { 1: str('name') },
  // k8s.io.api.rbac.v1
  Role: { 1: msg('metadata', 'ObjectMeta'), 2: msgs('rules', 'PolicyRule') },
  ClusterRole: { 1: msg('metadata', 'ObjectMeta'), 2: msgs('rules', 'PolicyRule'), 3: msg('aggregationRule', 'AggregationRule') },
  AggregationRule: { 1: msgs('clusterRoleSelectors', 'LabelSelector') },
  PolicyRule: { 1: strings('verbs'), 2: strings('apiGroups'), 3: strings('resources'), 4: strings('resourceNames'), 5: strings('nonResourceURLs') },
  RoleBinding: { 1: msg('metadata', 'ObjectMeta'), 2: msgs('subjects', 'Subject'), 3: msg('roleRef', 'RoleRef') },
  ClusterRoleBinding: { 1: msg('metadata', 'ObjectMeta'), 2: msgs('subjects', 'Subject'), 3: msg('roleRef', 'RoleRef') },
  RoleRef: { 1: str('apiGroup'), 2: str('kind'), 3: str('name') },
  Subject: { 1: str('kind'), 2: str('apiGroup'), 3: str('name'), 4: str('namespace') },
};

/** DeleteOptions, by the `apiVersion/kind` of its envelope (client-go encodes it under v1). */
export const DELETE_OPTIONS_KINDS: Readonly<Record<string, string>> = {
  'v1/DeleteOptions': 'DeleteOptions',
  'meta.k8s.io/v1/DeleteOptions': 'DeleteOptions',
};

/** The top-level message of each kind the double takes as protobuf, by `apiVersion/kind`. */
export const PROTOBUF_KINDS: Readonly<Record<string, string>> = {
  'v1/Secret': 'Secret',
  'v1/ConfigMap': 'ConfigMap',
  'v1/Namespace': 'Namespace',
  'v1/ServiceAccount': 'ServiceAccount',
  'rbac.authorization.k8s.io/v1/Role': 'Role',
  'rbac.authorization.k8s.io/v1/ClusterRole': 'ClusterRole',
  'rbac.authorization.k8s.io/v1/RoleBinding': 'RoleBinding',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': 'ClusterRoleBinding',
};
