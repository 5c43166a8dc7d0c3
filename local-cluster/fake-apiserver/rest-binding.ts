/**
 * `pods/<name>/binding`: the scheduler's assignment of a Pod to a node (spec.nodeName and the
 * PodScheduled condition), with admission on the subresource. A Pod already bound is a 409.
 */
import { clone, isRecord, kubeTime } from './objects.js';
import { Rejection, decodeObject, fail, type ApiRequest, type Reply, type RestContext } from './rest-common.js';
import { conflict, notFound, statusBody } from './status.js';

export async function handleBinding(ctx: RestContext, request: ApiRequest): Promise<Reply> {
  const { type, namespace, name = '' } = request.target;
  const binding = decodeObject(request);
  if (binding instanceof Rejection) return binding.reply;
  const pod = ctx.store.get(type.key, namespace, name);
  if (!pod) return fail(notFound(type, name));
  const node = isRecord(binding.target) ? String(binding.target.name ?? '') : '';
  const spec = isRecord(pod.spec) ? pod.spec : {};
  if (spec.nodeName) return fail(conflict(type, name, `pod ${name} is already assigned to node "${String(spec.nodeName)}"`));
  const run = ctx.admission({
    operation: 'CREATE',
    type,
    subresource: 'binding',
    namespace: namespace ?? '',
    name,
    object: { apiVersion: 'v1', kind: 'Binding', ...binding },
    user: request.user,
    dryRun: false,
    options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
  });
  const mutated = await run.mutate();
  if ('status' in mutated) return fail(mutated.status, run.warnings());
  const denial = await run.validate(mutated.object);
  if (denial) return fail(denial, run.warnings());
  const current = ctx.store.get(type.key, namespace, name);
  if (!current) return fail(notFound(type, name));
  const next = clone(current);
  next.spec = { ...(isRecord(next.spec) ? next.spec : {}), nodeName: node };
  const status = isRecord(next.status) ? next.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter((c) => !(isRecord(c) && c.type === 'PodScheduled')) : [];
  next.status = { ...status, conditions: [...conditions, { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: kubeTime() }] };
  ctx.store.update(type.key, next, { manager: 'kube-scheduler', operation: 'Update' });
  return { status: 201, body: statusBody({ status: 'Success', code: 201 }), warnings: run.warnings() };
}
