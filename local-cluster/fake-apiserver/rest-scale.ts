/**
 * The scale subresource (autoscaling/v1 Scale) of Deployments and ReplicaSets: what `kubectl
 * scale` reads and patches. A write sets spec.replicas of the object, with admission on
 * `<resource>/scale`.
 */
import { formatSelector } from './printers.js';
import { clone, isRecord, metaOf, type KubeObject } from './objects.js';
import { PATCH_CONTENT_TYPES, PatchError, applyPatch } from './patch.js';
import { Rejection, decodeObject, fail, mediaType, type ApiRequest, type Reply, type RestContext } from './rest-common.js';
import { badRequest, conflict, notFound, statusBody, unsupportedMediaType } from './status.js';

export function scaleOf(object: KubeObject): KubeObject {
  const meta = object.metadata ?? {};
  const spec = isRecord(object.spec) ? object.spec : {};
  const status = isRecord(object.status) ? object.status : {};
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: meta.name, namespace: meta.namespace, uid: meta.uid, resourceVersion: meta.resourceVersion, creationTimestamp: meta.creationTimestamp },
    spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 1 },
    status: { replicas: typeof status.replicas === 'number' ? status.replicas : 0, selector: formatSelector(spec.selector, '') },
  };
}

async function writeReplicas(ctx: RestContext, request: ApiRequest, old: KubeObject, scale: KubeObject): Promise<Reply> {
  const { type, namespace, name } = request.target;
  const replicas = isRecord(scale.spec) ? scale.spec.replicas : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    return fail(badRequest(`Scale.autoscaling "${name ?? ''}" is invalid: spec.replicas: Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`));
  }
  const rv = scale.metadata?.resourceVersion;
  if (rv !== undefined && rv !== '' && rv !== old.metadata?.resourceVersion) return fail(conflict(type, name ?? ''));
  const run = ctx.admission({
    operation: 'UPDATE',
    type,
    subresource: 'scale',
    namespace: namespace ?? '',
    name: name ?? '',
    object: scale,
    oldObject: scaleOf(old),
    user: request.user,
    dryRun: false,
    options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
  });
  const mutated = await run.mutate();
  if ('status' in mutated) return fail(mutated.status, run.warnings());
  const denial = await run.validate(mutated.object);
  if (denial) return fail(denial, run.warnings());
  const current = ctx.store.get(type.key, namespace, name ?? '');
  if (!current) return fail(notFound(type, name ?? ''));
  const next = clone(current);
  next.spec = { ...(isRecord(next.spec) ? next.spec : {}), replicas };
  const stored = ctx.store.update(type.key, next, { manager: request.query.get('fieldManager') ?? 'kubectl', operation: 'Update' });
  return { status: 200, body: scaleOf(stored), warnings: run.warnings() };
}

export async function handleScale(ctx: RestContext, request: ApiRequest, verb: 'get' | 'update' | 'patch'): Promise<Reply> {
  const { type, namespace, name } = request.target;
  const old = ctx.store.get(type.key, namespace, name ?? '');
  if (!old) return fail(notFound(type, name ?? ''));
  if (verb === 'get') return { status: 200, body: scaleOf(old) };
  if (verb === 'update') {
    const scale = decodeObject(request);
    if (scale instanceof Rejection) return scale.reply;
    return writeReplicas(ctx, request, old, scale);
  }
  const patchType = PATCH_CONTENT_TYPES[mediaType(request.contentType)];
  if (!patchType) return fail(unsupportedMediaType(Object.keys(PATCH_CONTENT_TYPES)));
  try {
    const scale = applyPatch(patchType, scaleOf(old), request.body, {}) as KubeObject;
    metaOf(scale).resourceVersion ??= old.metadata?.resourceVersion;
    return writeReplicas(ctx, request, old, scale);
  } catch (error) {
    if (error instanceof PatchError) return fail(statusBody({ status: 'Failure', message: error.message, reason: error.reason, code: error.code }));
    throw error;
  }
}
