/**
 * The REST verbs (contract section 5): each takes the parsed request and answers with a status
 * code and a body, in the order kube-apiserver checks things.
 */
import { randomBytes } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { invalidValue, forbiddenField, notSupported, required, tooLongField, type FieldError } from './field-errors.js';
import { parseSelectorQuery, selectorMatches } from './label-selector.js';
import { clone, isRecord, metaOf, type KubeObject } from './objects.js';
import { PATCH_CONTENT_TYPES, PatchError, applyPatch } from './patch.js';
import { apiVersionOf, validateObject, RESOURCE_TYPES, type ResourceType } from './resources.js';
import type { ApiTarget } from './routes.js';
import {
  alreadyExists,
  badRequest,
  conflict,
  deleteSuccess,
  invalid,
  notFound,
  statusBody,
  unsupportedMediaType,
  type StatusBody,
} from './status.js';
import type { ObjectStore, WriteOrigin } from './store.js';

export interface ApiRequest {
  target: ApiTarget;
  query: URLSearchParams;
  contentType: string;
  body: string;
  userAgent: string;
}

export interface Reply {
  status: number;
  body: unknown;
}

const BODY_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const PATCH_TYPES_ACCEPTED = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];
const FIELD_MANAGER_MAX = 128;
const PROPAGATION_POLICIES = ['Foreground', 'Background', 'Orphan'];

const fail = (status: StatusBody): Reply => ({ status: status.code ?? 500, body: status });

/** A decoding step that already knows the answer. */
class Rejection {
  constructor(readonly reply: Reply) {}
}
const reject = (status: StatusBody): Rejection => new Rejection(fail(status));
const mediaType = (contentType: string): string => (contentType.split(';')[0] ?? '').trim().toLowerCase();

/** The resource name plays the kind in some store errors (contract 5.1). */
const resourceAsKind = (type: ResourceType): { group: string; kind: string } => ({ group: type.group, kind: type.resource });
const kindOf = (type: ResourceType): { group: string; kind: string } => ({ group: type.group, kind: type.kind });

function decodeObject(request: ApiRequest): KubeObject | Rejection {
  const type = mediaType(request.contentType);
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
function checkTypeMeta(type: ResourceType, object: KubeObject): Reply | undefined {
  const expectedVersion = apiVersionOf(type);
  if (object.apiVersion !== undefined && object.apiVersion !== expectedVersion) {
    return fail(badRequest(`the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${expectedVersion})`));
  }
  if (object.kind !== undefined && object.kind !== type.kind) {
    return fail(badRequest(`the kind in the data (${String(object.kind)}) does not match the expected kind (${type.kind})`));
  }
  return undefined;
}

function dryRunOf(query: URLSearchParams): Reply | boolean {
  const values = query.getAll('dryRun');
  if (values.length === 0) return false;
  if (values.some((v) => v !== 'All')) {
    return fail(invalid({ group: 'meta.k8s.io', kind: 'CreateOptions' }, '', [notSupported('dryRun', values, ['All'])]));
  }
  return true;
}

function managerOf(request: ApiRequest): string {
  return request.query.get('fieldManager') ?? (request.userAgent.split('/')[0] || 'unknown');
}

function wipeSystemMetadata(object: KubeObject): void {
  const meta = metaOf(object);
  for (const key of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink']) {
    delete meta[key];
  }
}

function namespaceMissing(store: ObjectStore, type: ResourceType, namespace: string | undefined): Reply | undefined {
  if (!type.namespaced || store.get('namespaces', undefined, namespace ?? '')) return undefined;
  return fail(notFound(RESOURCE_TYPES.namespaces, namespace ?? ''));
}

/** Shared by POST and by an apply PATCH that creates. */
function createObject(store: ObjectStore, request: ApiRequest, object: KubeObject, origin: WriteOrigin, dryRun: boolean): Reply {
  const { type, namespace } = request.target;
  const meta = metaOf(object);
  if (type.namespaced) {
    if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
      return fail(badRequest('the namespace of the provided object does not match the namespace sent on the request'));
    }
    meta.namespace = namespace;
  }
  const decodeError = type.decodeError?.(object);
  if (decodeError) return fail(badRequest(decodeError));
  if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomBytes(3).toString('hex').slice(0, 5)}`;
  wipeSystemMetadata(object);
  type.prepare?.(object);
  const errors = validateObject(type, object);
  if (errors.length > 0) return fail(invalid(kindOf(type), meta.name ?? '', errors));
  const missing = namespaceMissing(store, type, namespace);
  if (missing) return missing;
  if (store.get(type.resource, namespace, meta.name ?? '')) return fail(alreadyExists(type, meta.name ?? ''));
  if (dryRun) return { status: 201, body: { ...object, apiVersion: apiVersionOf(type), kind: type.kind } };
  return { status: 201, body: store.create(type.resource, object, origin) };
}

export function handleCreate(store: ObjectStore, request: ApiRequest): Reply {
  const object = decodeObject(request);
  if (object instanceof Rejection) return object.reply;
  const typeError = checkTypeMeta(request.target.type, object);
  if (typeError) return typeError;
  const dryRun = dryRunOf(request.query);
  if (typeof dryRun !== 'boolean') return dryRun;
  return createObject(store, request, object, { manager: managerOf(request), operation: 'Update' }, dryRun);
}

export function handleGet(store: ObjectStore, request: ApiRequest): Reply {
  const { type, namespace, name } = request.target;
  const object = store.get(type.resource, namespace, name ?? '');
  return object ? { status: 200, body: object } : fail(notFound(type, name ?? ''));
}

/** `fieldSelector` supports metadata.name and metadata.namespace, `=`/`==`/`!=`. */
export function objectFilter(query: URLSearchParams): ((object: KubeObject) => boolean) | Reply {
  const labelText = query.get('labelSelector');
  const selector = labelText ? parseSelectorQuery(labelText) : undefined;
  if (labelText && !selector) return fail(badRequest(`unable to parse requirement: ${labelText}`));
  const fieldChecks: ((object: KubeObject) => boolean)[] = [];
  for (const part of (query.get('fieldSelector') ?? '').split(',').filter((p) => p !== '')) {
    const m = part.match(/^(metadata\.name|metadata\.namespace)(==|=|!=)(.*)$/);
    if (!m) return fail(badRequest(`"${part}" is not a known field selector: only "metadata.name", "metadata.namespace"`));
    const field = m[1] === 'metadata.name' ? 'name' : 'namespace';
    const negate = m[2] === '!=';
    const value = m[3] ?? '';
    fieldChecks.push((object) => (String(object.metadata?.[field] ?? '') === value) !== negate);
  }
  return (object) =>
    (selector === undefined || selectorMatches(selector, object.metadata?.labels ?? {})) && fieldChecks.every((check) => check(object));
}

/** Where a paged list goes on: the key (namespace/name) of the last item served. Opaque to clients. */
function continueToken(object: KubeObject): string {
  return Buffer.from(JSON.stringify({ after: `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}` })).toString('base64url');
}

function afterKey(token: string): string | undefined {
  try {
    const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { after?: unknown };
    return typeof decoded.after === 'string' ? decoded.after : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `limit` and `continue` as kube-apiserver pages a list: at most `limit` items, and while more
 * remain a `metadata.continue` token plus `remainingItemCount`. The double resumes after the last
 * key against the current store (kube-apiserver serves the snapshot of the first page).
 */
function page(items: KubeObject[], query: URLSearchParams): { items: KubeObject[]; continue?: string; remainingItemCount?: number } | Reply {
  const token = query.get('continue');
  let rest = items;
  if (token) {
    const after = afterKey(token);
    if (after === undefined) return fail(badRequest('continue key is not valid: illegal base64 data or bad JSON'));
    rest = items.filter((item) => `${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}` > after);
  }
  const limitText = query.get('limit');
  const limit = limitText === null ? 0 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 0) return fail(badRequest(`invalid limit "${limitText}"`));
  if (limit === 0 || rest.length <= limit) return { items: rest };
  const served = rest.slice(0, limit);
  return { items: served, continue: continueToken(served[served.length - 1]!), remainingItemCount: rest.length - limit };
}

export function handleList(store: ObjectStore, request: ApiRequest): Reply {
  const { type, namespace } = request.target;
  const filter = objectFilter(request.query);
  if (typeof filter !== 'function') return filter;
  const paged = page(store.list(type.resource, namespace).filter(filter), request.query);
  if (!('items' in paged)) return paged;
  const items = paged.items.map((item) => {
    // Items of a typed list carry no apiVersion/kind of their own.
    delete item.apiVersion;
    delete item.kind;
    return item;
  });
  const metadata: Record<string, unknown> = { resourceVersion: String(store.currentRevision) };
  if (paged.continue) {
    metadata.continue = paged.continue;
    metadata.remainingItemCount = paged.remainingItemCount;
  }
  return {
    status: 200,
    body: {
      kind: `${type.kind}List`,
      apiVersion: apiVersionOf(type),
      metadata,
      items,
    },
  };
}

/** The checks of store.Update: resourceVersion required or not, stale -> 409, then validation. */
function updateObject(store: ObjectStore, request: ApiRequest, object: KubeObject, old: KubeObject, origin: WriteOrigin, dryRun: boolean): Reply {
  const { type, name } = request.target;
  const meta = metaOf(object);
  const decodeError = type.decodeError?.(object);
  if (decodeError) return fail(badRequest(decodeError));
  const rv = meta.resourceVersion;
  if ((rv === undefined || rv === '') && !type.allowUnconditionalUpdate) {
    return fail(invalid(resourceAsKind(type), name ?? '', [invalidValue('metadata.resourceVersion', 0, 'must be specified for an update')]));
  }
  if (rv !== undefined && rv !== '' && rv !== old.metadata?.resourceVersion) return fail(conflict(type, name ?? ''));
  type.prepare?.(object);
  meta.uid = old.metadata?.uid;
  const errors = validateObject(type, object, old);
  if (errors.length > 0) return fail(invalid(kindOf(type), name ?? '', errors));
  if (dryRun) return { status: 200, body: { ...object, apiVersion: apiVersionOf(type), kind: type.kind } };
  return { status: 200, body: store.update(type.resource, object, origin) };
}

export function handleUpdate(store: ObjectStore, request: ApiRequest): Reply {
  const { type, namespace, name } = request.target;
  const object = decodeObject(request);
  if (object instanceof Rejection) return object.reply;
  const typeError = checkTypeMeta(type, object);
  if (typeError) return typeError;
  const meta = metaOf(object);
  if ((meta.name ?? '') !== name) {
    return fail(badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name ?? ''})`));
  }
  if (type.namespaced) {
    if (meta.namespace && meta.namespace !== namespace) {
      return fail(badRequest(`the namespace of the object (${meta.namespace}) does not match the namespace on the request (${namespace ?? ''})`));
    }
    meta.namespace = namespace;
  }
  const dryRun = dryRunOf(request.query);
  if (typeof dryRun !== 'boolean') return dryRun;
  const old = store.get(type.resource, namespace, name ?? '');
  if (!old) return fail(notFound(type, name ?? ''));
  return updateObject(store, request, object, old, { manager: managerOf(request), operation: 'Update' }, dryRun);
}

function validatePatchOptions(request: ApiRequest, isApply: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const force = request.query.get('force');
  const manager = request.query.get('fieldManager') ?? '';
  if (!isApply && force !== null) errors.push(forbiddenField('force', 'may not be specified for non-apply patch'));
  if (isApply && manager === '') errors.push(required('fieldManager', 'is required for apply patch'));
  if (manager.length > FIELD_MANAGER_MAX) errors.push(tooLongField('fieldManager', FIELD_MANAGER_MAX));
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(manager)) errors.push(invalidValue('fieldManager', manager, 'must only contain printable characters'));
  return errors;
}

export function handlePatch(store: ObjectStore, request: ApiRequest): Reply {
  const { type, namespace, name } = request.target;
  const patchType = PATCH_CONTENT_TYPES[mediaType(request.contentType)];
  if (!patchType) return fail(unsupportedMediaType(PATCH_TYPES_ACCEPTED));
  const optionErrors = validatePatchOptions(request, patchType === 'apply');
  if (optionErrors.length > 0) return fail(invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', optionErrors));
  const dryRun = dryRunOf(request.query);
  if (typeof dryRun !== 'boolean') return dryRun;
  const origin: WriteOrigin = { manager: managerOf(request), operation: patchType === 'apply' ? 'Apply' : 'Update' };
  const old = store.get(type.resource, namespace, name ?? '');
  if (!old && patchType !== 'apply') return fail(notFound(type, name ?? ''));
  let patched: KubeObject;
  try {
    patched = applyPatch(patchType, old ? clone(old) : {}, request.body, type.mergeKeys) as KubeObject;
  } catch (error) {
    if (error instanceof PatchError) {
      return fail(statusBody({ status: 'Failure', message: error.message, reason: error.reason, code: error.code }));
    }
    throw error;
  }
  const typeError = checkTypeMeta(type, patched);
  if (typeError) return typeError;
  const meta = metaOf(patched);
  if (!old) {
    if ((meta.name ?? name) !== name) return fail(badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name ?? ''})`));
    meta.name = name;
    return createObject(store, request, patched, origin, dryRun);
  }
  if (meta.name !== name || (type.namespaced && meta.namespace !== namespace)) {
    return fail(badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name ?? ''})`));
  }
  if (meta.resourceVersion === undefined) meta.resourceVersion = old.metadata?.resourceVersion;
  return updateObject(store, request, patched, old, origin, dryRun);
}

interface DeleteOptions {
  propagationPolicy?: unknown;
  orphanDependents?: unknown;
  dryRun?: unknown;
  preconditions?: { uid?: string; resourceVersion?: string };
}

function readDeleteOptions(request: ApiRequest): DeleteOptions | Rejection {
  let options: DeleteOptions = {};
  if (request.body.trim() !== '') {
    try {
      const parsed: unknown = JSON.parse(request.body);
      if (isRecord(parsed)) options = parsed as DeleteOptions;
    } catch (error) {
      return reject(badRequest(`the body of the request could not be decoded as DeleteOptions: ${(error as Error).message}`));
    }
  }
  const query = request.query;
  if (query.has('propagationPolicy')) options.propagationPolicy = query.get('propagationPolicy');
  if (query.has('orphanDependents')) options.orphanDependents = query.get('orphanDependents') === 'true';
  if (query.has('dryRun')) options.dryRun = query.getAll('dryRun');
  return options;
}

function validateDeleteOptions(options: DeleteOptions): FieldError[] {
  const errors: FieldError[] = [];
  const policy = options.propagationPolicy;
  const hasPolicy = policy !== undefined && policy !== null;
  if (hasPolicy && options.orphanDependents !== undefined && options.orphanDependents !== null) {
    errors.push(invalidValue('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (hasPolicy && !PROPAGATION_POLICIES.includes(String(policy))) {
    errors.push(notSupported('propagationPolicy', policy, [...PROPAGATION_POLICIES, 'nil']));
  }
  const dryRun = Array.isArray(options.dryRun) ? options.dryRun.map(String) : [];
  if (dryRun.some((v) => v !== 'All')) errors.push(notSupported('dryRun', dryRun, ['All']));
  return errors;
}

export function handleDelete(store: ObjectStore, request: ApiRequest): Reply {
  const { type, namespace, name } = request.target;
  const deleteOptions = readDeleteOptions(request);
  if (deleteOptions instanceof Rejection) return deleteOptions.reply;
  const errors = validateDeleteOptions(deleteOptions);
  if (errors.length > 0) return fail(invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', errors));
  const existing = store.get(type.resource, namespace, name ?? '');
  if (!existing) return fail(notFound(type, name ?? ''));
  const uid = existing.metadata?.uid ?? '';
  const rv = existing.metadata?.resourceVersion ?? '';
  const pre = deleteOptions.preconditions ?? {};
  if (pre.uid !== undefined && pre.uid !== uid) {
    return fail(conflict(type, name ?? '', `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${uid}`));
  }
  if (pre.resourceVersion !== undefined && pre.resourceVersion !== rv) {
    return fail(conflict(type, name ?? '', `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${rv}`));
  }
  const dryRun = Array.isArray(deleteOptions.dryRun) && deleteOptions.dryRun.length > 0;
  if (!dryRun) store.delete(type.resource, namespace, name ?? '');
  return { status: 200, body: deleteSuccess(type, name ?? '', uid) };
}
