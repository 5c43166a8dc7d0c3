/** The built-in resource types the double serves, as discovery lists them. */
import { CLEANUP_FINALIZER } from './crd-object.js';
import { defaultCustomResourceDefinition, prepareCrdForCreate, prepareCrdForUpdate, validateCustomResourceDefinition } from './crd-validation.js';
import { isRecord, metaOf, type KubeObject } from './objects.js';
import * as printers from './printers.js';
import { ALL_VERBS, type ResourceType } from './resources.js';
import { applyBindingDefaults, applyPolicyDefaults } from './policy-defaults.js';
import { validateAdmissionPolicy, validateAdmissionPolicyBinding, validateMutatingAdmissionPolicy, validateMutatingAdmissionPolicyBinding } from './policy-validation.js';
import { applyWebhookDefaults } from './webhook-defaults.js';
import { dropDisabledWebhookFields, validateWebhookConfiguration } from './webhook-validation.js';
import { allocateClusterIp, defaultDeployment, defaultPod, defaultReplicaSet, defaultService } from './workload-defaults.js';
import { validatePod, validatePodController, validateService } from './workload-validation.js';

type Json = Record<string, unknown>;

const WEBHOOK_MERGE_KEYS = { webhooks: 'name', matchConditions: 'name' };

/** The patchMergeKey tags of the Pod spec, for strategic merge patches of Pods and their templates. */
const POD_MERGE_KEYS = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  ports: 'containerPort',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  volumes: 'name',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  tolerations: 'key',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
  conditions: 'type',
  ownerReferences: 'uid',
};

type Definition = Omit<ResourceType, 'key' | 'nameRule' | 'allowUnconditionalUpdate' | 'mergeKeys' | 'subresources' | 'shortNames' | 'categories' | 'singular'> &
  Partial<Pick<ResourceType, 'nameRule' | 'allowUnconditionalUpdate' | 'mergeKeys' | 'subresources' | 'shortNames' | 'categories' | 'singular'>>;

function define(definition: Definition): ResourceType {
  return {
    key: definition.resource,
    singular: definition.kind.toLowerCase(),
    shortNames: [],
    categories: [],
    nameRule: 'subdomain',
    allowUnconditionalUpdate: true,
    mergeKeys: { ownerReferences: 'uid' },
    subresources: [],
    ...definition,
  };
}

/** Where the go decoder of a []byte field stops: padded standard base64 or an error offset. */
function base64ErrorOffset(text: string): number | undefined {
  const bad = text.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0) return bad;
  if (text.length % 4 !== 0 || /=[^=]/.test(text)) return Math.max(0, text.length - (text.length % 4 || 4));
  return undefined;
}

function undecodable(kind: string, values: unknown[]): string | undefined {
  for (const value of values) {
    if (value === undefined || value === null) continue;
    const at = base64ErrorOffset(String(value));
    if (at !== undefined) return `${kind} in version "v1" cannot be handled as a ${kind}: illegal base64 data at input byte ${at}`;
  }
  return undefined;
}

/** caBundle is a []byte: JSON carries it as base64, so PEM text pasted in fails to decode. */
function caBundleDecodeError(object: KubeObject, kind: string): string | undefined {
  const hooks = Array.isArray(object.webhooks) ? object.webhooks : [];
  return undecodable(kind, hooks.map((hook) => (isRecord(hook) && isRecord(hook.clientConfig) ? hook.clientConfig.caBundle : undefined)));
}

function webhookConfiguration(resource: string, kind: string, mutating: boolean): ResourceType {
  return define({
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    resource,
    kind,
    namespaced: false,
    verbs: ALL_VERBS,
    categories: ['api-extensions'],
    allowUnconditionalUpdate: false,
    generationField: 'webhooks',
    prepare: (object) => applyWebhookDefaults(object, mutating),
    validate: (object, old, served) => validateWebhookConfiguration(object, mutating, old, served.minor),
    dropDisabled: (object, old, served) => dropDisabledWebhookFields(object, old, served.minor),
    decodeError: (object) => caBundleDecodeError(object, kind),
    mergeKeys: WEBHOOK_MERGE_KEYS,
    columns: printers.WEBHOOK_CONFIGURATION_COLUMNS,
  });
}

/** Secret.stringData is write-only: merged into data as base64 on every write. */
function normaliseSecret(object: KubeObject): void {
  object.type ??= 'Opaque';
  if (isRecord(object.stringData)) {
    const data = isRecord(object.data) ? object.data : {};
    for (const [key, value] of Object.entries(object.stringData)) {
      data[key] = Buffer.from(String(value), 'utf8').toString('base64');
    }
    object.data = data;
    delete object.stringData;
  }
}

/** Every namespace carries kubernetes.io/metadata.name=<name> (GA since 1.22). */
export function labelNamespace(object: KubeObject): void {
  const meta = metaOf(object);
  meta.labels = { ...(meta.labels ?? {}), 'kubernetes.io/metadata.name': meta.name ?? '' };
  object.spec ??= { finalizers: ['kubernetes'] };
  object.status ??= { phase: 'Active' };
}

const rec = (value: unknown): Json => (isRecord(value) ? value : {});
const text = (value: unknown): string => (value === undefined || value === null ? '' : String(value));

/** Pods that never reached a node, or that have finished, go at once; others get their grace period. */
function podGracePeriod(pod: KubeObject): number | undefined {
  const spec = rec(pod.spec);
  const phase = text(rec(pod.status).phase);
  if (text(spec.nodeName) === '' || phase === 'Succeeded' || phase === 'Failed') return 0;
  return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
}

const POD_FIELD_LABELS = {
  'spec.nodeName': (o: KubeObject) => text(rec(o.spec).nodeName),
  'spec.restartPolicy': (o: KubeObject) => text(rec(o.spec).restartPolicy),
  'spec.schedulerName': (o: KubeObject) => text(rec(o.spec).schedulerName),
  'spec.serviceAccountName': (o: KubeObject) => text(rec(o.spec).serviceAccountName),
  'status.phase': (o: KubeObject) => text(rec(o.status).phase),
  'status.podIP': (o: KubeObject) => text(rec(o.status).podIP),
  'status.nominatedNodeName': (o: KubeObject) => text(rec(o.status).nominatedNodeName),
};

const involved = (field: string) => (o: KubeObject) => text(rec(o.involvedObject)[field]);
const EVENT_FIELD_LABELS = {
  'involvedObject.kind': involved('kind'),
  'involvedObject.namespace': involved('namespace'),
  'involvedObject.name': involved('name'),
  'involvedObject.uid': involved('uid'),
  'involvedObject.apiVersion': involved('apiVersion'),
  'involvedObject.resourceVersion': involved('resourceVersion'),
  'involvedObject.fieldPath': involved('fieldPath'),
  reason: (o: KubeObject) => text(o.reason),
  reportingComponent: (o: KubeObject) => text(o.reportingComponent),
  source: (o: KubeObject) => text(rec(o.source).component),
  type: (o: KubeObject) => text(o.type),
};

const REPLICAS_SCALE = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' };

/** Pods start Pending, as the pod strategy's PrepareForCreate sets them. */
function podInitialStatus(pod: KubeObject): void {
  pod.status = { phase: 'Pending', qosClass: 'BestEffort' };
}

export const BUILTIN_TYPES: readonly ResourceType[] = [
  webhookConfiguration('mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', true),
  webhookConfiguration('validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false),
  define({
    group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicies', kind: 'ValidatingAdmissionPolicy', namespaced: false,
    verbs: ALL_VERBS, categories: ['api-extensions'], generationField: 'spec', subresources: ['status'], prepare: applyPolicyDefaults, sinceMinor: 30,
    validate: (object) => validateAdmissionPolicy(object), columns: printers.ADMISSION_POLICY_COLUMNS,
  }),
  define({
    group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicybindings', kind: 'ValidatingAdmissionPolicyBinding',
    namespaced: false, verbs: ALL_VERBS, categories: ['api-extensions'], generationField: 'spec', prepare: applyBindingDefaults, sinceMinor: 30,
    validate: (object) => validateAdmissionPolicyBinding(object), columns: printers.ADMISSION_POLICY_BINDING_COLUMNS,
  }),
  // MutatingAdmissionPolicy: v1beta1 since 1.34 (off by default there; the double serves it as a
  // cluster that enabled it does). v1alpha1 of 1.32-1.33 is not served.
  define({
    group: 'admissionregistration.k8s.io', version: 'v1beta1', resource: 'mutatingadmissionpolicies', kind: 'MutatingAdmissionPolicy', namespaced: false,
    verbs: ALL_VERBS, categories: ['api-extensions'], generationField: 'spec', prepare: applyPolicyDefaults, sinceMinor: 34,
    validate: (object) => validateMutatingAdmissionPolicy(object),
  }),
  define({
    group: 'admissionregistration.k8s.io', version: 'v1beta1', resource: 'mutatingadmissionpolicybindings', kind: 'MutatingAdmissionPolicyBinding',
    namespaced: false, verbs: ALL_VERBS, categories: ['api-extensions'], generationField: 'spec', prepare: applyBindingDefaults, sinceMinor: 34,
    validate: (object) => validateMutatingAdmissionPolicyBinding(object),
  }),
  define({
    group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, verbs: ALL_VERBS,
    shortNames: ['ns'], nameRule: 'label', prepare: labelNamespace, subresources: ['status', 'finalize'],
    columns: printers.NAMESPACE_COLUMNS, fieldLabels: { 'status.phase': (o) => text(rec(o.status).phase) },
  }),
  define({
    group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true, verbs: ALL_VERBS,
    prepare: normaliseSecret,
    // Secret.data values are []byte too; stringData is the field for plain text.
    decodeError: (object) => undecodable('Secret', isRecord(object.data) ? Object.values(object.data) : []),
    columns: printers.SECRET_COLUMNS, fieldLabels: { type: (o) => text(o.type) },
  }),
  define({ group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ALL_VERBS, shortNames: ['cm'], columns: printers.CONFIGMAP_COLUMNS }),
  define({ group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, verbs: ALL_VERBS, shortNames: ['sa'], columns: printers.SERVICE_ACCOUNT_COLUMNS }),
  define({
    group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true, verbs: ALL_VERBS, shortNames: ['po'], categories: ['all'],
    subresources: ['status', 'log', 'binding', 'eviction'], prepare: defaultPod, prepareForCreate: podInitialStatus, validate: validatePod,
    mergeKeys: POD_MERGE_KEYS, columns: printers.POD_COLUMNS, fieldLabels: POD_FIELD_LABELS, gracePeriodSeconds: podGracePeriod,
  }),
  define({
    group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true, verbs: ALL_VERBS, shortNames: ['svc'], categories: ['all'],
    nameRule: 'label', subresources: ['status'], prepare: defaultService, prepareForCreate: allocateClusterIp, validate: validateService,
    mergeKeys: { ports: 'port', ownerReferences: 'uid' }, columns: printers.SERVICE_COLUMNS,
  }),
  define({ group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints', singular: 'endpoints', namespaced: true, verbs: ALL_VERBS, shortNames: ['ep'], columns: printers.ENDPOINTS_COLUMNS }),
  define({
    group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, verbs: ALL_VERBS, shortNames: ['ev'],
    columns: printers.EVENT_COLUMNS, fieldLabels: EVENT_FIELD_LABELS,
  }),
  define({
    group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, verbs: ALL_VERBS, shortNames: ['no'],
    subresources: ['status'], columns: printers.NODE_COLUMNS,
  }),
  define({
    group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, verbs: ALL_VERBS, shortNames: ['deploy'], categories: ['all'],
    generationField: 'spec', subresources: ['status', 'scale'], scale: REPLICAS_SCALE, prepare: defaultDeployment, validate: validatePodController,
    mergeKeys: POD_MERGE_KEYS, columns: printers.DEPLOYMENT_COLUMNS,
  }),
  define({
    group: 'apps', version: 'v1', resource: 'replicasets', kind: 'ReplicaSet', namespaced: true, verbs: ALL_VERBS, shortNames: ['rs'], categories: ['all'],
    generationField: 'spec', subresources: ['status', 'scale'], scale: REPLICAS_SCALE, prepare: defaultReplicaSet, validate: validatePodController,
    mergeKeys: POD_MERGE_KEYS, columns: printers.REPLICASET_COLUMNS, fieldLabels: { 'status.replicas': (o) => text(rec(o.status).replicas ?? 0) },
  }),
  // The other workload kinds: stored and served (what `audit` lists); no controller runs them.
  define({
    group: 'apps', version: 'v1', resource: 'statefulsets', kind: 'StatefulSet', namespaced: true, verbs: ALL_VERBS, shortNames: ['sts'], categories: ['all'],
    generationField: 'spec', subresources: ['status', 'scale'], scale: REPLICAS_SCALE, mergeKeys: POD_MERGE_KEYS,
  }),
  define({
    group: 'apps', version: 'v1', resource: 'daemonsets', kind: 'DaemonSet', namespaced: true, verbs: ALL_VERBS, shortNames: ['ds'], categories: ['all'],
    generationField: 'spec', subresources: ['status'], mergeKeys: POD_MERGE_KEYS,
  }),
  define({
    group: '', version: 'v1', resource: 'replicationcontrollers', kind: 'ReplicationController', namespaced: true, verbs: ALL_VERBS, shortNames: ['rc'],
    categories: ['all'], generationField: 'spec', subresources: ['status', 'scale'], scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
    mergeKeys: POD_MERGE_KEYS,
  }),
  define({
    group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job', namespaced: true, verbs: ALL_VERBS, categories: ['all'],
    generationField: 'spec', subresources: ['status'], mergeKeys: POD_MERGE_KEYS,
  }),
  define({
    group: 'batch', version: 'v1', resource: 'cronjobs', kind: 'CronJob', namespaced: true, verbs: ALL_VERBS, shortNames: ['cj'], categories: ['all'],
    generationField: 'spec', subresources: ['status'], mergeKeys: POD_MERGE_KEYS,
  }),
  define({
    group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true, verbs: ALL_VERBS,
    columns: printers.ENDPOINT_SLICE_COLUMNS,
  }),
  define({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true, verbs: ALL_VERBS, columns: printers.LEASE_COLUMNS }),
  define({
    group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', namespaced: true, verbs: ALL_VERBS, shortNames: ['pdb'],
    generationField: 'spec', subresources: ['status'], columns: printers.PDB_COLUMNS,
  }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false, verbs: ALL_VERBS, columns: printers.ROLE_COLUMNS }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false, verbs: ALL_VERBS, columns: printers.BINDING_COLUMNS }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true, verbs: ALL_VERBS, columns: printers.ROLE_COLUMNS }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', kind: 'RoleBinding', namespaced: true, verbs: ALL_VERBS, columns: printers.BINDING_COLUMNS }),
  // Never stored: a create is answered by the authorizer (rest-subject-access-review.ts).
  define({ group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews', kind: 'SubjectAccessReview', namespaced: false, verbs: ['create'] }),
  define({
    group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false, verbs: ALL_VERBS,
    shortNames: ['crd', 'crds'], categories: ['api-extensions'], generationField: 'spec', subresources: ['status'], columns: printers.CRD_COLUMNS,
    allowUnconditionalUpdate: false,
    prepare: defaultCustomResourceDefinition,
    prepareForCreate: prepareCrdForCreate,
    prepareForUpdate: prepareCrdForUpdate,
    validate: (object, old) => validateCustomResourceDefinition(object, old),
    finalizeOnDelete: CLEANUP_FINALIZER,
  }),
];

