/**
 * DELETE (contract 5.3, registry/rest/delete.go): options, preconditions, admission (mutating and
 * validating, with the stored object as oldObject), then graceful deletion (Pods on a node),
 * finalizers (foregroundDeletion and orphan for those propagation policies, a Namespace's
 * `kubernetes`), or removal at once.
 */
import { asServedVersion } from './custom-resource-types.js';
import { invalidValue, notSupported, type FieldError } from './field-errors.js';
import { clone, isRecord, metaOf, type KubeObject } from './objects.js';
import { Rejection, fail, mediaType, reject, type ApiRequest, type Reply, type RestContext } from './rest-common.js';
import { decodeKubernetesProtobuf, PROTOBUF_MEDIA_TYPE, ProtobufDecodeError, UnmodelledKindError } from './protobuf/decode.js';
import { DELETE_OPTIONS_KINDS } from './protobuf/messages.js';
import { badRequest, conflict, deleteSuccess, invalid, notFound } from './status.js';
import type { ResourceType } from './resources.js';

const PROPAGATION_POLICIES = ['Foreground', 'Background', 'Orphan'];

interface DeleteOptions {
  propagationPolicy?: unknown;
  orphanDependents?: unknown;
  dryRun?: unknown;
  gracePeriodSeconds?: unknown;
  preconditions?: { uid?: string; resourceVersion?: string };
}

function readDeleteOptions(request: ApiRequest): DeleteOptions | Rejection {
  let options: DeleteOptions = {};
  if (mediaType(request.contentType) === PROTOBUF_MEDIA_TYPE && (request.bytes?.length ?? 0) > 0) {
    try {
      options = decodeKubernetesProtobuf(request.bytes!, DELETE_OPTIONS_KINDS) as DeleteOptions;
    } catch (error) {
      if (!(error instanceof ProtobufDecodeError || error instanceof UnmodelledKindError)) throw error;
      return reject(badRequest(`the body of the request could not be decoded as DeleteOptions: ${error.message}`));
    }
  } else if (request.body.trim() !== '') {
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
  if (query.has('gracePeriodSeconds')) options.gracePeriodSeconds = Number(query.get('gracePeriodSeconds'));
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

/** The finalizer the propagation policy asks the garbage collector for (Background: none). */
function propagationFinalizer(options: DeleteOptions): string | undefined {
  if (options.propagationPolicy === 'Foreground') return 'foregroundDeletion';
  if (options.propagationPolicy === 'Orphan' || options.orphanDependents === true) return 'orphan';
  return undefined;
}

function gracePeriod(type: ResourceType, object: KubeObject, options: DeleteOptions): number | undefined {
  const requested = typeof options.gracePeriodSeconds === 'number' && Number.isFinite(options.gracePeriodSeconds) ? options.gracePeriodSeconds : undefined;
  const byType = type.gracePeriodSeconds?.(object);
  if (byType === undefined) return undefined;
  // Negative values mean "as short as possible": 1 s (registry/rest/delete.go).
  return requested === undefined ? byType : requested < 0 ? 1 : requested;
}

const namespaceFinalizers = (type: ResourceType, object: KubeObject): string[] =>
  type.key === 'namespaces' && isRecord(object.spec) && Array.isArray(object.spec.finalizers) ? object.spec.finalizers.map(String) : [];

/** Keeps the object with deletionTimestamp while finalizers or a grace period run; the reply is the object. */
function deleteLater(ctx: RestContext, type: ResourceType, object: KubeObject, addFinalizers: string[], graceSeconds: number): Reply {
  const meta = metaOf(object);
  const { namespace, name = '' } = meta;
  const missing = addFinalizers.filter((finalizer) => !(meta.finalizers ?? []).includes(finalizer));
  if (missing.length > 0) {
    const next = clone(object);
    metaOf(next).finalizers = [...(meta.finalizers ?? []), ...missing];
    ctx.store.update(type.key, next);
  }
  if (type.key === 'namespaces' && !object.metadata?.deletionTimestamp) {
    const next = ctx.store.get(type.key, namespace, name) ?? object;
    next.status = { ...(isRecord(next.status) ? next.status : {}), phase: 'Terminating' };
    ctx.store.update(type.key, next);
  }
  return { status: 200, body: asServedVersion(type, ctx.store.markDeleting(type.key, namespace, name, graceSeconds)) };
}

export async function handleDelete(ctx: RestContext, request: ApiRequest): Promise<Reply> {
  const { type, namespace, name } = request.target;
  const deleteOptions = readDeleteOptions(request);
  if (deleteOptions instanceof Rejection) return deleteOptions.reply;
  const errors = validateDeleteOptions(deleteOptions);
  if (errors.length > 0) return fail(invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', errors));
  const existing = asServedVersion(type, ctx.store.get(type.key, namespace, name ?? ''));
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
  const run = ctx.admission({
    operation: 'DELETE',
    type,
    namespace: type.namespaced ? (namespace ?? '') : type.key === 'namespaces' ? (name ?? '') : '',
    name: name ?? '',
    oldObject: existing,
    user: request.user,
    dryRun,
    options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', ...deleteOptions },
  });
  const mutated = await run.mutate();
  if ('status' in mutated) return fail(mutated.status, run.warnings());
  const denial = await run.validate(undefined);
  if (denial) return fail(denial, run.warnings());
  const warnings = run.warnings();
  const current = ctx.store.get(type.key, namespace, name ?? '');
  if (!current) return fail(notFound(type, name ?? ''), warnings);
  if (dryRun) return { status: 200, body: deleteSuccess(type, name ?? '', uid), warnings };
  // A CRD's own finalizer is kube-apiserver's (its finalizer controller), there with or without controllers.
  if (type.finalizeOnDelete) return { ...deleteLater(ctx, type, current, [type.finalizeOnDelete], 0), warnings };
  if (ctx.finalizers) {
    const grace = gracePeriod(type, current, deleteOptions);
    const addFinalizer = propagationFinalizer(deleteOptions);
    const pending = [...(current.metadata?.finalizers ?? []), ...namespaceFinalizers(type, current), ...(addFinalizer ? [addFinalizer] : [])];
    if ((grace !== undefined && grace > 0) || pending.length > 0) {
      return { ...deleteLater(ctx, type, current, addFinalizer ? [addFinalizer] : [], grace ?? 0), warnings };
    }
  }
  ctx.store.delete(type.key, namespace, name ?? '');
  return { status: 200, body: deleteSuccess(type, name ?? '', uid), warnings };
}
