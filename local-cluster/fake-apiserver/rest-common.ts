/** What every REST handler shares: the request, the reply, decoding and the checks made first. */
import { parse as parseYaml } from 'yaml';
import type { UserInfo } from './identity.js';
import { decodeKubernetesProtobuf, PROTOBUF_MEDIA_TYPE, ProtobufDecodeError, UnmodelledKindError } from './protobuf/decode.js';
import { PROTOBUF_KINDS } from './protobuf/messages.js';
import { invalid, badRequest, notFound, namespaceTerminating, unsupportedMediaType, type StatusBody } from './status.js';
import { notSupported } from './field-errors.js';
import { isRecord, metaOf, type KubeObject } from './objects.js';
import { apiVersionOf, type ResourceType, type ServedVersion } from './resources.js';
import type { ApiTarget } from './routes.js';
import type { ObjectStore } from './store.js';
import type { WriteAdmission } from './write-admission.js';

export interface ApiRequest {
  target: ApiTarget;
  query: URLSearchParams;
  contentType: string;
  /** The Accept header: Tables and metadata-only reads are negotiated. */
  accept?: string;
  body: string;
  /** The body as received (a protobuf body is binary). */
  bytes?: Buffer;
  userAgent: string;
  /** The authenticated user (admission's userInfo). */
  user: UserInfo;
}

export interface Reply {
  status: number;
  body: unknown;
  /** Sent as `Warning: 299 - "..."` headers. */
  warnings?: string[];
  /** A plain-text body (pod logs) instead of JSON. */
  text?: string;
  /** Bytes of another media type (the protobuf OpenAPI v2 document). */
  raw?: { contentType: string; body: Buffer };
}

export interface RestContext {
  store: ObjectStore;
  /** The kube-apiserver release the double claims to be: validation and dropped fields follow it. */
  served: ServedVersion;
  admission: WriteAdmission;
  /**
   * Finalizers are honoured (deletionTimestamp set, the object kept until they are gone), as
   * when a garbage collector and a namespace controller run; otherwise deletes are immediate.
   */
  finalizers: boolean;
}

export const fail = (status: StatusBody, warnings?: string[]): Reply => ({ status: status.code ?? 500, body: status, ...(warnings && warnings.length > 0 ? { warnings } : {}) });

/** A decoding step that already knows the answer. */
export class Rejection {
  constructor(readonly reply: Reply) {}
}
export const reject = (status: StatusBody): Rejection => new Rejection(fail(status));
export const mediaType = (contentType: string): string => (contentType.split(';')[0] ?? '').trim().toLowerCase();

/** The double decodes JSON, YAML and, for the kinds in protobuf/messages.ts, protobuf (typed clients: Helm's release Secrets, `kubectl create`). */
const BODY_TYPES = ['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE];

/** The resource name plays the kind in some store errors (contract 5.1). */
export const resourceAsKind = (type: ResourceType): { group: string; kind: string } => ({ group: type.group, kind: type.resource });
export const kindOf = (type: ResourceType): { group: string; kind: string } => ({ group: type.group, kind: type.kind });

function decodeProtobuf(request: ApiRequest): KubeObject | Rejection {
  try {
    return decodeKubernetesProtobuf(request.bytes ?? Buffer.from(request.body, 'utf8')) as KubeObject;
  } catch (error) {
    if (error instanceof UnmodelledKindError) {
      return reject(unsupportedMediaType(['application/json', 'application/yaml'], `the local cluster decodes protobuf only for ${Object.keys(PROTOBUF_KINDS).join(', ')}; ${error.message} must come as JSON or YAML`));
    }
    if (error instanceof ProtobufDecodeError) return reject(badRequest(`the object provided is unrecognized: ${error.message}`));
    throw error;
  }
}

export function decodeObject(request: ApiRequest): KubeObject | Rejection {
  const type = mediaType(request.contentType);
  if (type === PROTOBUF_MEDIA_TYPE) return decodeProtobuf(request);
  if (type !== 'application/json' && type !== 'application/yaml') return reject(unsupportedMediaType(BODY_TYPES));
  let decoded: unknown;
  try {
    decoded = type === 'application/yaml' ? parseYaml(request.body) : JSON.parse(request.body);
  } catch (error) {
    return reject(badRequest(`the object provided is unrecognized: ${(error as Error).message}`));
  }
  if (!isRecord(decoded)) return reject(badRequest("Object 'Kind' is missing in the request body"));
  return decoded as KubeObject;
}

/** apiVersion and kind must match the URL when given; missing ones are filled in. */
export function checkTypeMeta(type: ResourceType, object: KubeObject): Reply | undefined {
  const expectedVersion = apiVersionOf(type);
  if (object.apiVersion !== undefined && object.apiVersion !== expectedVersion) {
    return fail(badRequest(`the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${expectedVersion})`));
  }
  if (object.kind !== undefined && object.kind !== type.kind) {
    return fail(badRequest(`the kind in the data (${String(object.kind)}) does not match the expected kind (${type.kind})`));
  }
  return undefined;
}

export function dryRunOf(query: URLSearchParams, optionsKind = 'CreateOptions'): Reply | boolean {
  const values = query.getAll('dryRun');
  if (values.length === 0) return false;
  if (values.some((v) => v !== 'All')) {
    return fail(invalid({ group: 'meta.k8s.io', kind: optionsKind }, '', [notSupported('dryRun', values, ['All'])]));
  }
  return true;
}

export function managerOf(request: ApiRequest): string {
  return request.query.get('fieldManager') ?? (request.userAgent.split('/')[0] || 'unknown');
}

export function wipeSystemMetadata(object: KubeObject): void {
  const meta = metaOf(object);
  for (const key of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink']) {
    delete meta[key];
  }
}

/**
 * The NamespaceLifecycle admission plugin, first in the chain: no object in a missing namespace
 * (404), no new object in one being deleted (403).
 */
export function namespaceLifecycle(store: ObjectStore, type: ResourceType, namespace: string | undefined, creating: { name: string } | undefined): Reply | undefined {
  if (!type.namespaced) return undefined;
  const stored = store.get('namespaces', undefined, namespace ?? '');
  if (!stored) return fail(notFound({ group: '', resource: 'namespaces' }, namespace ?? ''));
  if (creating && stored.metadata?.deletionTimestamp) return fail(namespaceTerminating(type, creating.name, namespace ?? ''));
  return undefined;
}

/** The options object admission passes on (CreateOptions, UpdateOptions), from the query. */
export function writeOptions(kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', request: ApiRequest, dryRun: boolean): Record<string, unknown> {
  const options: Record<string, unknown> = { kind: kind === 'PatchOptions' ? 'UpdateOptions' : kind, apiVersion: 'meta.k8s.io/v1' };
  if (dryRun) options.dryRun = ['All'];
  const manager = request.query.get('fieldManager');
  if (manager) options.fieldManager = manager;
  const validation = request.query.get('fieldValidation');
  if (validation) options.fieldValidation = validation;
  return options;
}
