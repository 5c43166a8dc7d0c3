/**
 * The built-in kinds a typed webhook can name: where each lives in the API (group, version,
 * resource plural, scope) and which subresources carry the object itself. Runtime data only;
 * the object types are in kind-objects.ts.
 */

/** Where a kind lives in the API, and what a webhook for it needs to know to derive its rules. */
export interface KindInfo<T = unknown> {
  /** The kind as in `kind:` of a manifest, e.g. `Deployment`. */
  kind: string;
  /** The API group, "" for the core group. */
  group: string;
  version: string;
  /** The resource: lowercase plural, e.g. `deployments`. */
  plural: string;
  namespaced: boolean;
  /**
   * Subresources whose requests carry this kind's object, e.g. `status`, and `ephemeralcontainers`
   * for Pods (what `kubectl debug` writes). A typed webhook's rules may name them.
   */
  subresources: readonly string[];
  /**
   * Subresources with containers a typed rule is registered for by default, because a rule that
   * judges containers must see them too (`pods/ephemeralcontainers`).
   */
  containerSubresources: readonly string[];
  /** Type-level only: the type of the object (never set at run time). */
  readonly objectType?: T;
}

/** The fields of a KindInfo that say where a kind lives; the rest is defaulted. */
export type KindLocation = Pick<KindInfo, 'kind' | 'group' | 'version' | 'plural' | 'namespaced'> &
  Partial<Pick<KindInfo, 'subresources' | 'containerSubresources'>>;

function kind(kindName: string, group: string, version: string, plural: string, namespaced: boolean, extra: Partial<KindInfo> = {}): KindInfo {
  return { kind: kindName, group, version, plural, namespaced, subresources: ['status'], containerSubresources: [], ...extra };
}

const NO_STATUS = { subresources: [] };

/** Every built-in kind a typed webhook may name, by kind. */
export const BUILT_IN_KIND_TABLE = {
  Pod: kind('Pod', '', 'v1', 'pods', true, { subresources: ['status', 'ephemeralcontainers', 'resize'], containerSubresources: ['ephemeralcontainers'] }),
  PodTemplate: kind('PodTemplate', '', 'v1', 'podtemplates', true, NO_STATUS),
  ReplicationController: kind('ReplicationController', '', 'v1', 'replicationcontrollers', true),
  Service: kind('Service', '', 'v1', 'services', true),
  ConfigMap: kind('ConfigMap', '', 'v1', 'configmaps', true, NO_STATUS),
  Secret: kind('Secret', '', 'v1', 'secrets', true, NO_STATUS),
  ServiceAccount: kind('ServiceAccount', '', 'v1', 'serviceaccounts', true, NO_STATUS),
  Namespace: kind('Namespace', '', 'v1', 'namespaces', false),
  Node: kind('Node', '', 'v1', 'nodes', false),
  PersistentVolumeClaim: kind('PersistentVolumeClaim', '', 'v1', 'persistentvolumeclaims', true),
  PersistentVolume: kind('PersistentVolume', '', 'v1', 'persistentvolumes', false),
  Endpoints: kind('Endpoints', '', 'v1', 'endpoints', true, NO_STATUS),
  LimitRange: kind('LimitRange', '', 'v1', 'limitranges', true, NO_STATUS),
  ResourceQuota: kind('ResourceQuota', '', 'v1', 'resourcequotas', true),
  Deployment: kind('Deployment', 'apps', 'v1', 'deployments', true),
  StatefulSet: kind('StatefulSet', 'apps', 'v1', 'statefulsets', true),
  DaemonSet: kind('DaemonSet', 'apps', 'v1', 'daemonsets', true),
  ReplicaSet: kind('ReplicaSet', 'apps', 'v1', 'replicasets', true),
  Job: kind('Job', 'batch', 'v1', 'jobs', true),
  CronJob: kind('CronJob', 'batch', 'v1', 'cronjobs', true),
  Ingress: kind('Ingress', 'networking.k8s.io', 'v1', 'ingresses', true),
  IngressClass: kind('IngressClass', 'networking.k8s.io', 'v1', 'ingressclasses', false, NO_STATUS),
  NetworkPolicy: kind('NetworkPolicy', 'networking.k8s.io', 'v1', 'networkpolicies', true, NO_STATUS),
  PodDisruptionBudget: kind('PodDisruptionBudget', 'policy', 'v1', 'poddisruptionbudgets', true),
  HorizontalPodAutoscaler: kind('HorizontalPodAutoscaler', 'autoscaling', 'v2', 'horizontalpodautoscalers', true),
  Role: kind('Role', 'rbac.authorization.k8s.io', 'v1', 'roles', true, NO_STATUS),
  RoleBinding: kind('RoleBinding', 'rbac.authorization.k8s.io', 'v1', 'rolebindings', true, NO_STATUS),
  ClusterRole: kind('ClusterRole', 'rbac.authorization.k8s.io', 'v1', 'clusterroles', false, NO_STATUS),
  ClusterRoleBinding: kind('ClusterRoleBinding', 'rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', false, NO_STATUS),
  StorageClass: kind('StorageClass', 'storage.k8s.io', 'v1', 'storageclasses', false, NO_STATUS),
  PriorityClass: kind('PriorityClass', 'scheduling.k8s.io', 'v1', 'priorityclasses', false, NO_STATUS),
  RuntimeClass: kind('RuntimeClass', 'node.k8s.io', 'v1', 'runtimeclasses', false, NO_STATUS),
  Lease: kind('Lease', 'coordination.k8s.io', 'v1', 'leases', true, NO_STATUS),
  EndpointSlice: kind('EndpointSlice', 'discovery.k8s.io', 'v1', 'endpointslices', true, NO_STATUS),
  CustomResourceDefinition: kind('CustomResourceDefinition', 'apiextensions.k8s.io', 'v1', 'customresourcedefinitions', false),
  ValidatingWebhookConfiguration: kind('ValidatingWebhookConfiguration', 'admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', false, NO_STATUS),
  MutatingWebhookConfiguration: kind('MutatingWebhookConfiguration', 'admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', false, NO_STATUS),
} as const satisfies Record<string, KindInfo>;

/** A built-in kind a typed webhook may name, e.g. `'Pod'`. */
export type BuiltInKindName = keyof typeof BUILT_IN_KIND_TABLE;

/** Whether `name` is a built-in kind of the table. */
export function isBuiltInKind(name: unknown): name is BuiltInKindName {
  return typeof name === 'string' && Object.hasOwn(BUILT_IN_KIND_TABLE, name);
}

/**
 * A kind of your own (a CRD's), for typed webhooks: `defineKind<Widget>({ kind: 'Widget', group:
 * 'example.com', version: 'v1', plural: 'widgets', namespaced: true })`. `kube-admission-server
 * types --crd FILE` writes these for a CRD, with the type of its objects.
 */
export function defineKind<T>(location: KindLocation): KindInfo<T> {
  return {
    kind: location.kind,
    group: location.group,
    version: location.version,
    plural: location.plural,
    namespaced: location.namespaced,
    subresources: [...(location.subresources ?? [])],
    containerSubresources: [...(location.containerSubresources ?? [])],
  };
}
