/**
 * Create, update and patch (contract section 5), in kube-apiserver's order: decode (and strict
 * field validation), NamespaceLifecycle, mutating admission, the store's defaults, generated
 * name, system fields and validation, validating admission, then the write (409 when the name is
 * taken or the resourceVersion is stale).
 */
import { randomInt, randomUUID } from 'node:crypto';
import { asServedVersion } from './custom-resource-types.js';
import { forbiddenField, invalidValue, required, tooLongField, type FieldError } from './field-errors.js';
import { fieldChecker, fieldValidationOf } from './field-validation.js';
import { clone, kubeTime, metaOf, type KubeObject } from './objects.js';
import { PATCH_CONTENT_TYPES, PatchError, applyPatch, type PatchType } from './patch.js';
import { apiVersionOf, hasStatusSubresource, validateObject, type ResourceType } from './resources.js';
import {
  Rejection,
  checkTypeMeta,
  decodeObject,
  dryRunOf,
  fail,
  kindOf,
  managerOf,
  mediaType,
  namespaceLifecycle,
  resourceAsKind,
  wipeSystemMetadata,
  writeOptions,
  type ApiRequest,
  type Reply,
  type RestContext,
} from './rest-common.js';
import { alreadyExists, badRequest, conflict, etcdRequestTooLarge, forbiddenCreate, invalid, notFound, statusBody, unsupportedMediaType } from './status.js';
import type { WriteOrigin } from './store.js';

const PATCH_TYPES_ACCEPTED = Object.keys(PATCH_CONTENT_TYPES);
const FIELD_MANAGER_MAX = 128;
/** Attempts of a patch or unconditional update that lost a race with another write (GuaranteedUpdate retries too). */
const MAX_UPDATE_ATTEMPTS = 5;
/** etcd's default --max-request-bytes (1.5 MiB): a custom resource, stored as JSON, larger than this is refused by etcd. */
const ETCD_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;
/** utilrand's alphabet: no vowels, no confusable characters. */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function generatedSuffix(length = 5): string {
  let suffix = '';
  for (let i = 0; i < length; i++) suffix += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return suffix;
}

/** etcd refuses the write (kube-apiserver passes its error on as a 500): only custom resources, which are stored as JSON, are measured. */
function tooLargeForEtcd(type: ResourceType, object: KubeObject): boolean {
  return type.custom !== undefined && Buffer.byteLength(JSON.stringify(object)) > ETCD_MAX_REQUEST_BYTES;
}

/** The namespace admission sees: the object's, or a Namespace's own name. */
function admissionNamespace(type: ResourceType, namespace: string | undefined, name: string): string {
  if (type.namespaced) return namespace ?? '';
  return type.key === 'namespaces' ? name : '';
}

function withWarnings(reply: Reply, warnings: string[]): Reply {
  return warnings.length > 0 ? { ...reply, warnings: [...(reply.warnings ?? []), ...warnings] } : reply;
}

/** Decoded, type-checked and field-validated body, or the reply that ends the request. */
async function decodeWrite(request: ApiRequest): Promise<{ object: KubeObject; dryRun: boolean; warnings: string[] } | Reply> {
  const object = decodeObject(request);
  if (object instanceof Rejection) return object.reply;
  const typeError = checkTypeMeta(request.target.type, object);
  if (typeError) return typeError;
  const dryRun = dryRunOf(request.query, request.target.name === undefined ? 'CreateOptions' : 'UpdateOptions');
  if (typeof dryRun !== 'boolean') return dryRun;
  const directive = fieldValidationOf(request.query);
  if (typeof directive === 'object') return fail(badRequest(directive.error));
  const findings = (await fieldChecker(directive))(request.target.type, object);
  if (findings.error) return fail(badRequest(findings.error));
  return { object, dryRun, warnings: findings.warnings };
}

/** Shared by POST and by an apply PATCH that creates. */
async function createObject(ctx: RestContext, request: ApiRequest, object: KubeObject, origin: WriteOrigin, dryRun: boolean, warnings: string[]): Promise<Reply> {
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
  wipeSystemMetadata(object);
  if (hasStatusSubresource(type)) delete object.status;
  type.prepare?.(object);
  // forbidCreateAdmission wraps the whole admission chain, NamespaceLifecycle included.
  if (type.custom?.terminating) return fail(forbiddenCreate(type, meta.name ?? ''));
  const lifecycle = namespaceLifecycle(ctx.store, type, namespace, { name: meta.name ?? '' });
  if (lifecycle) return lifecycle;

  const run = ctx.admission({
    operation: 'CREATE',
    type,
    namespace: admissionNamespace(type, namespace, meta.name ?? ''),
    name: meta.name ?? '',
    object,
    user: request.user,
    dryRun,
    options: writeOptions('CreateOptions', request, dryRun),
  });
  const mutated = await run.mutate();
  const allWarnings = (): string[] => [...warnings, ...run.warnings()];
  if ('status' in mutated) return fail(mutated.status, allWarnings());
  const admitted = mutated.object ?? object;
  type.prepare?.(admitted);
  const admittedMeta = metaOf(admitted);
  if (!admittedMeta.name && admittedMeta.generateName) admittedMeta.name = `${admittedMeta.generateName}${generatedSuffix()}`;
  type.prepareForCreate?.(admitted);
  type.dropDisabled?.(admitted, undefined, ctx.served);
  const name = admittedMeta.name ?? '';
  const errors = validateObject(type, admitted, ctx.served);
  if (errors.length > 0) return fail(invalid(kindOf(type), name, errors), allWarnings());
  const preset = { uid: randomUUID(), creationTimestamp: kubeTime() };
  admittedMeta.uid = preset.uid;
  admittedMeta.creationTimestamp = preset.creationTimestamp;
  const denial = await run.validate(admitted);
  if (denial) return fail(denial, allWarnings());
  if (ctx.store.get(type.key, namespace, name)) return fail(alreadyExists(type, name), allWarnings());
  if (dryRun) return withWarnings({ status: 201, body: { ...admitted, apiVersion: apiVersionOf(type), kind: type.kind } }, allWarnings());
  if (tooLargeForEtcd(type, admitted)) return fail(etcdRequestTooLarge(), allWarnings());
  return withWarnings({ status: 201, body: asServedVersion(type, ctx.store.create(type.key, admitted, origin, preset)) }, allWarnings());
}

export async function handleCreate(ctx: RestContext, request: ApiRequest): Promise<Reply> {
  const decoded = await decodeWrite(request);
  if ('status' in decoded) return decoded;
  return createObject(ctx, request, decoded.object, { manager: managerOf(request), operation: 'Update' }, decoded.dryRun, decoded.warnings);
}

/** A deleting object whose finalizers are all gone (and whose grace period is over) leaves the store. */
function finalized(type: ResourceType, object: KubeObject): boolean {
  const meta = metaOf(object);
  if (meta.deletionTimestamp === undefined || (meta.finalizers ?? []).length > 0) return false;
  if ((meta.deletionGracePeriodSeconds ?? 0) > 0) return false;
  const specFinalizers = type.key === 'namespaces' && Array.isArray((object.spec as { finalizers?: unknown[] } | undefined)?.finalizers)
    ? ((object.spec as { finalizers: unknown[] }).finalizers.length)
    : 0;
  return specFinalizers === 0;
}

interface UpdateSpec {
  object: KubeObject;
  old: KubeObject;
  origin: WriteOrigin;
  dryRun: boolean;
  warnings: string[];
  /** `status` or `finalize`: only that part of the object changes. */
  subresource?: string;
  /** The client sent a resourceVersion (a conditional update: a race is a 409, not a retry). */
  conditional: boolean;
}

type UpdateResult = Reply | 'retry';

/** The checks of store.Update: mutating admission, resourceVersion, validation, validating admission, write. */
async function updateObject(ctx: RestContext, request: ApiRequest, spec: UpdateSpec): Promise<UpdateResult> {
  const { type, namespace, name } = request.target;
  const { object, old } = spec;
  const meta = metaOf(object);
  const decodeError = type.decodeError?.(object);
  if (decodeError) return fail(badRequest(decodeError));
  if (hasStatusSubresource(type) && spec.subresource === undefined) {
    if (old.status === undefined) delete object.status;
    else object.status = clone(old.status);
  }
  type.prepare?.(object);
  const run = ctx.admission({
    operation: 'UPDATE',
    type,
    subresource: spec.subresource,
    namespace: admissionNamespace(type, namespace, name ?? ''),
    name: name ?? '',
    object,
    oldObject: old,
    user: request.user,
    dryRun: spec.dryRun,
    options: writeOptions('UpdateOptions', request, spec.dryRun),
  });
  const mutated = await run.mutate();
  const allWarnings = (): string[] => [...spec.warnings, ...run.warnings()];
  if ('status' in mutated) return fail(mutated.status, allWarnings());
  const admitted = mutated.object ?? object;
  type.prepare?.(admitted);
  const admittedMeta = metaOf(admitted);
  const rv = meta.resourceVersion;
  if ((rv === undefined || rv === '') && !type.allowUnconditionalUpdate) {
    // The registry names the kind from the object; for the types the contract covers, the resource plays it.
    const kind = type.custom ? kindOf(type) : resourceAsKind(type);
    return fail(invalid(kind, name ?? '', [invalidValue('metadata.resourceVersion', 0, 'must be specified for an update')]), allWarnings());
  }
  if (rv !== undefined && rv !== '' && rv !== old.metadata?.resourceVersion) return fail(conflict(type, name ?? ''), allWarnings());
  admittedMeta.uid = old.metadata?.uid;
  if (spec.subresource === undefined) type.prepareForUpdate?.(admitted, old);
  type.dropDisabled?.(admitted, old, ctx.served);
  const errors = validateObject(type, admitted, ctx.served, old);
  if (errors.length > 0) return fail(invalid(kindOf(type), name ?? '', errors), allWarnings());
  const denial = await run.validate(admitted);
  if (denial) return fail(denial, allWarnings());
  // Admission took time: another write may have landed (GuaranteedUpdate's compare-and-swap).
  const current = ctx.store.get(type.key, namespace, name ?? '');
  if (!current) return fail(notFound(type, name ?? ''), allWarnings());
  if (current.metadata?.resourceVersion !== old.metadata?.resourceVersion) {
    return spec.conditional ? fail(conflict(type, name ?? ''), allWarnings()) : 'retry';
  }
  if (spec.dryRun) return withWarnings({ status: 200, body: { ...admitted, apiVersion: apiVersionOf(type), kind: type.kind } }, allWarnings());
  if (tooLargeForEtcd(type, admitted)) return fail(etcdRequestTooLarge(), allWarnings());
  const stored = ctx.store.update(type.key, admitted, spec.origin);
  if (ctx.finalizers && finalized(type, stored)) ctx.store.delete(type.key, namespace, name ?? '');
  return withWarnings({ status: 200, body: asServedVersion(type, stored) }, allWarnings());
}

/** A status (or finalize) write keeps everything else of the stored object. */
function onlySubresourceChanges(subresource: string, old: KubeObject, incoming: KubeObject): KubeObject {
  const next = clone(old);
  if (subresource === 'finalize') {
    const spec = { ...((old.spec ?? {}) as Record<string, unknown>) };
    spec.finalizers = (incoming.spec as { finalizers?: unknown } | undefined)?.finalizers ?? [];
    next.spec = spec;
  } else {
    next.status = incoming.status;
  }
  const rv = incoming.metadata?.resourceVersion;
  metaOf(next).resourceVersion = rv === undefined || rv === '' ? old.metadata?.resourceVersion : rv;
  return next;
}

export async function handleUpdate(ctx: RestContext, request: ApiRequest): Promise<Reply> {
  const { type, namespace, name, subresource } = request.target;
  const decoded = await decodeWrite(request);
  if ('status' in decoded) return decoded;
  const { object } = decoded;
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
  const conditional = meta.resourceVersion !== undefined && meta.resourceVersion !== '';
  for (let attempt = 1; ; attempt++) {
    const old = asServedVersion(type, ctx.store.get(type.key, namespace, name ?? ''));
    if (!old) return fail(notFound(type, name ?? ''));
    const next = subresource === undefined ? clone(object) : onlySubresourceChanges(subresource, old, object);
    const result = await updateObject(ctx, request, {
      object: next,
      old,
      origin: { manager: managerOf(request), operation: 'Update' },
      dryRun: decoded.dryRun,
      warnings: decoded.warnings,
      subresource,
      conditional,
    });
    if (result !== 'retry') return result;
    if (attempt >= MAX_UPDATE_ATTEMPTS) return fail(conflict(type, name ?? ''));
  }
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

/** The patched object, or the reply for a patch that cannot be used. */
function patched(type: ResourceType, patchType: PatchType, old: KubeObject | undefined, body: string): { object: KubeObject } | { reply: Reply } {
  try {
    return { object: applyPatch(patchType, old ? clone(old) : {}, body, type.mergeKeys) as KubeObject };
  } catch (error) {
    if (error instanceof PatchError) {
      return { reply: fail(statusBody({ status: 'Failure', message: error.message, reason: error.reason, code: error.code })) };
    }
    throw error;
  }
}

export async function handlePatch(ctx: RestContext, request: ApiRequest): Promise<Reply> {
  const { type, namespace, name, subresource } = request.target;
  const patchType = PATCH_CONTENT_TYPES[mediaType(request.contentType)];
  if (!patchType) return fail(unsupportedMediaType(PATCH_TYPES_ACCEPTED));
  const optionErrors = validatePatchOptions(request, patchType === 'apply');
  if (optionErrors.length > 0) return fail(invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', optionErrors));
  const dryRun = dryRunOf(request.query, 'PatchOptions');
  if (typeof dryRun !== 'boolean') return dryRun;
  const directive = fieldValidationOf(request.query);
  if (typeof directive === 'object') return fail(badRequest(directive.error));
  const checkFields = await fieldChecker(directive);
  const origin: WriteOrigin = { manager: managerOf(request), operation: patchType === 'apply' ? 'Apply' : 'Update' };
  for (let attempt = 1; ; attempt++) {
    const old = asServedVersion(type, ctx.store.get(type.key, namespace, name ?? ''));
    if (!old && (patchType !== 'apply' || subresource !== undefined)) return fail(notFound(type, name ?? ''));
    const attemptResult = patched(type, patchType, old, request.body);
    if ('reply' in attemptResult) return attemptResult.reply;
    const result = attemptResult.object;
    const typeError = checkTypeMeta(type, result);
    if (typeError) return typeError;
    const findings = checkFields(type, result);
    if (findings.error) return fail(badRequest(findings.error));
    const meta = metaOf(result);
    if (!old) {
      if ((meta.name ?? name) !== name) return fail(badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name ?? ''})`));
      meta.name = name;
      return createObject(ctx, request, result, origin, dryRun, findings.warnings);
    }
    if (meta.name !== name || (type.namespaced && meta.namespace !== namespace)) {
      return fail(badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name ?? ''})`));
    }
    const conditional = meta.resourceVersion !== undefined && meta.resourceVersion !== old.metadata?.resourceVersion;
    if (meta.resourceVersion === undefined) meta.resourceVersion = old.metadata?.resourceVersion;
    const next = subresource === undefined ? result : onlySubresourceChanges(subresource, old, result);
    const outcome = await updateObject(ctx, request, { object: next, old, origin, dryRun, warnings: findings.warnings, subresource, conditional });
    if (outcome !== 'retry') return outcome;
    if (attempt >= MAX_UPDATE_ATTEMPTS) return fail(conflict(type, name ?? ''));
  }
}
