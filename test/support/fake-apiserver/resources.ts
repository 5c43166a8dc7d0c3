/** The resource types the double serves, with what differs between them. */
import type { FieldError } from './field-errors.js';
import { validateObjectMeta, type NameRule } from './meta-validation.js';
import { isRecord, metaOf, type KubeObject } from './objects.js';
import { applyWebhookDefaults } from './webhook-defaults.js';
import { validateWebhookConfiguration } from './webhook-validation.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export const ALL_VERBS: readonly Verb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const READ_VERBS: readonly Verb[] = ['get', 'list', 'watch'];

export type ResourceName =
  | 'mutatingwebhookconfigurations'
  | 'validatingwebhookconfigurations'
  | 'namespaces'
  | 'secrets'
  | 'pods'
  | 'leases'
  | 'deployments'
  | 'replicasets'
  | 'statefulsets'
  | 'daemonsets'
  | 'replicationcontrollers'
  | 'jobs'
  | 'cronjobs'
  | 'clusterroles';

export interface ResourceType {
  group: string;
  version: string;
  resource: ResourceName;
  kind: string;
  namespaced: boolean;
  /** What the REST API serves; tests change the rest through the store. */
  verbs: readonly Verb[];
  nameRule: NameRule;
  /** PUT without metadata.resourceVersion: allowed for Secrets and Leases, refused for webhook configurations. */
  allowUnconditionalUpdate: boolean;
  /** Which top-level field bumps metadata.generation when it changes (none: no generation). */
  generationField?: string;
  /** Defaults and normalisation applied on every write through the API. */
  prepare?: (object: KubeObject) => void;
  /** Resource-specific validation (metadata is always validated). */
  validate?: (object: KubeObject, old?: KubeObject) => FieldError[];
  /** Problems the Go decoder would hit (bad base64 in []byte fields): answered with 400. */
  decodeError?: (object: KubeObject) => string | undefined;
  /** Lists merged by key in strategic-merge and apply patches, by field name. */
  mergeKeys: Readonly<Record<string, string>>;
}

export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

const WEBHOOK_MERGE_KEYS = { webhooks: 'name', matchConditions: 'name' };

function webhookConfiguration(resource: ResourceName, kind: string, mutating: boolean): ResourceType {
  return {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    resource,
    kind,
    namespaced: false,
    verbs: ALL_VERBS,
    nameRule: 'subdomain',
    allowUnconditionalUpdate: false,
    generationField: 'webhooks',
    prepare: (object) => applyWebhookDefaults(object, mutating),
    validate: (object, old) => validateWebhookConfiguration(object, mutating, old),
    decodeError: (object) => caBundleDecodeError(object, kind),
    mergeKeys: WEBHOOK_MERGE_KEYS,
  };
}

/** Where Go's decoder of a []byte field stops: padded standard base64 or an error offset. */
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

function plain(
  group: string,
  version: string,
  resource: ResourceName,
  kind: string,
  namespaced: boolean,
  verbs: readonly Verb[],
  extra: Partial<ResourceType> = {},
): ResourceType {
  return {
    group,
    version,
    resource,
    kind,
    namespaced,
    verbs,
    nameRule: 'subdomain',
    allowUnconditionalUpdate: true,
    mergeKeys: {},
    ...extra,
  };
}

export const RESOURCE_TYPES: Readonly<Record<ResourceName, ResourceType>> = {
  mutatingwebhookconfigurations: webhookConfiguration('mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', true),
  validatingwebhookconfigurations: webhookConfiguration('validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false),
  namespaces: plain('', 'v1', 'namespaces', 'Namespace', false, ['get', 'list', 'watch', 'create'], {
    nameRule: 'label',
    prepare: labelNamespace,
  }),
  secrets: plain('', 'v1', 'secrets', 'Secret', true, ALL_VERBS, {
    prepare: normaliseSecret,
    // Secret.data values are []byte too; stringData is the field for plain text.
    decodeError: (object) => undecodable('Secret', isRecord(object.data) ? Object.values(object.data) : []),
  }),
  pods: plain('', 'v1', 'pods', 'Pod', true, READ_VERBS),
  leases: plain('coordination.k8s.io', 'v1', 'leases', 'Lease', true, ALL_VERBS),
  deployments: plain('apps', 'v1', 'deployments', 'Deployment', true, READ_VERBS, { generationField: 'spec' }),
  replicasets: plain('apps', 'v1', 'replicasets', 'ReplicaSet', true, READ_VERBS, { generationField: 'spec' }),
  // The other workload kinds, read only: what `audit` lists.
  statefulsets: plain('apps', 'v1', 'statefulsets', 'StatefulSet', true, READ_VERBS, { generationField: 'spec' }),
  daemonsets: plain('apps', 'v1', 'daemonsets', 'DaemonSet', true, READ_VERBS, { generationField: 'spec' }),
  replicationcontrollers: plain('', 'v1', 'replicationcontrollers', 'ReplicationController', true, READ_VERBS, { generationField: 'spec' }),
  jobs: plain('batch', 'v1', 'jobs', 'Job', true, READ_VERBS, { generationField: 'spec' }),
  cronjobs: plain('batch', 'v1', 'cronjobs', 'CronJob', true, READ_VERBS, { generationField: 'spec' }),
  clusterroles: plain('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false, ['get', 'list', 'watch']),
};

export function findResourceType(group: string, version: string, resource: string): ResourceType | undefined {
  const type = (RESOURCE_TYPES as Record<string, ResourceType | undefined>)[resource];
  return type && type.group === group && type.version === version ? type : undefined;
}

export function validateObject(type: ResourceType, object: KubeObject, old?: KubeObject): FieldError[] {
  if (type.validate) return type.validate(object, old);
  return validateObjectMeta(object.metadata ?? {}, type.nameRule);
}
