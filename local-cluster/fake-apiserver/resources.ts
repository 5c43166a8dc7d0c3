/** What the double knows about a resource type: its names, verbs, rules, defaults and printing. */
import type { JsonSchema } from './crd-schema.js';
import type { FieldError } from './field-errors.js';
import { validateObjectMeta, type NameRule } from './meta-validation.js';
import type { KubeObject } from './objects.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export const ALL_VERBS: readonly Verb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
export const READ_VERBS: readonly Verb[] = ['get', 'list', 'watch'];

/**
 * The key a type's objects are stored under: the plural for the built-in types
 * (`secrets`, `deployments`), `<plural>.<group>` for custom resources (`certificates.cert-manager.io`).
 */
export type ResourceName = string;

/** One column of server-side printing (a meta.k8s.io/v1 Table). */
export interface ColumnSpec {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  /** 0: always shown; 1: only with `-o wide`. */
  priority?: number;
  cell(object: KubeObject, now: Date): unknown;
}

/** Where the scale subresource reads and writes replicas (autoscaling/v1 Scale). */
export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** What a type served from a CustomResourceDefinition carries besides the generic parts. */
export interface CustomResourceInfo {
  /** The CRD's name and uid. */
  crd: string;
  uid: string;
  /** The version the store keeps every object in; the served versions differ from it in apiVersion only. */
  storageVersion: string;
  /** The version's openAPIV3Schema. */
  schema?: JsonSchema;
  /** When Established turned True (ms since the epoch): a create shortly after waits (customresource_handler's justCreated). */
  establishedAt?: number;
  /** The CRD is being deleted: creates are refused. */
  terminating: boolean;
  /** The Warning header every request to a deprecated version gets. */
  deprecationWarning?: string;
}

export interface ResourceType {
  /** The store key; see ResourceName. */
  key: ResourceName;
  group: string;
  version: string;
  resource: string;
  kind: string;
  singular: string;
  shortNames: readonly string[];
  categories: readonly string[];
  namespaced: boolean;
  /** What the REST API serves. */
  verbs: readonly Verb[];
  nameRule: NameRule;
  /** PUT without metadata.resourceVersion: allowed for most types, refused for webhook configurations. */
  allowUnconditionalUpdate: boolean;
  /** Which top-level field bumps metadata.generation when it changes (none: no generation). */
  generationField?: string;
  /** Instead of generationField: whether a change from `old` to `next` bumps the generation (custom resources: anything but metadata). */
  generationChanged?: (old: KubeObject, next: KubeObject) => boolean;
  /** The kind of its lists; `<kind>List` when unset. */
  listKind?: string;
  /** Subresources served: `status`, `scale`, `log`, `finalize`. */
  subresources: readonly string[];
  scale?: ScaleSpec;
  /** Defaults and normalisation applied on every write through the API. */
  prepare?: (object: KubeObject) => void;
  /** Runs once, on create: allocations such as a Service's clusterIP, a Pod's initial status. */
  prepareForCreate?: (object: KubeObject) => void;
  /** Runs on an update of the object itself (not a subresource), after mutating admission, with the stored object. */
  prepareForUpdate?: (object: KubeObject, old: KubeObject) => void;
  /** A finalizer the registry adds at the first delete (a CRD's customresourcecleanup), whoever deletes. */
  finalizeOnDelete?: string;
  /** The whole validation, metadata included; absent: metadata only. `served`: what the double claims to be. */
  validate?: (object: KubeObject, old: KubeObject | undefined, served: ServedVersion) => FieldError[];
  /** Fields the claimed version does not take, dropped from every write (kube-apiserver's DropDisabledFields). */
  dropDisabled?: (object: KubeObject, old: KubeObject | undefined, served: ServedVersion) => void;
  /** The first minor release that serves it (ValidatingAdmissionPolicy v1: 30); older claimed versions answer 404 and leave it out of discovery. */
  sinceMinor?: number;
  /** Problems the Go decoder would hit (bad base64 in []byte fields): answered with 400. */
  decodeError?: (object: KubeObject) => string | undefined;
  /** Lists merged by key in strategic-merge and apply patches, by field name. */
  mergeKeys: Readonly<Record<string, string>>;
  /** Server-side printing; the default is Name and Created At, as for types without a printer. */
  columns?: readonly ColumnSpec[];
  /** Field selectors served besides metadata.name and metadata.namespace. */
  fieldLabels?: Readonly<Record<string, (object: KubeObject) => string>>;
  /**
   * Graceful deletion: the grace period a DELETE without one gets (Pods: their
   * terminationGracePeriodSeconds); undefined deletes at once.
   */
  gracePeriodSeconds?: (object: KubeObject) => number | undefined;
  /** Served from a CustomResourceDefinition. */
  custom?: CustomResourceInfo;
}

export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

export function hasStatusSubresource(type: ResourceType): boolean {
  return type.subresources.includes('status');
}

/** The kube-apiserver the double claims to be (GET /version), for what depends on its release. */
export interface ServedVersion {
  minor: number;
}

/** The minor version of a gitVersion such as v1.27.16-eks-2f008fe. */
export function servedVersion(gitVersion: string): ServedVersion {
  const minor = Number(/^v\d+\.(\d+)\./.exec(gitVersion)?.[1]);
  if (!Number.isInteger(minor)) throw new Error(`fake apiserver: "${gitVersion}" is not a version like v1.35.2`);
  return { minor };
}

export function validateObject(type: ResourceType, object: KubeObject, served: ServedVersion, old?: KubeObject): FieldError[] {
  // A type's own validation includes its metadata, in the order its Go code checks them.
  if (type.validate) return type.validate(object, old, served);
  return validateObjectMeta(object.metadata ?? {}, type.nameRule);
}
