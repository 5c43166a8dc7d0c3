/**
 * `pods/<name>/eviction` (policy/v1 Eviction), what `kubectl drain` posts for each Pod, as
 * kube-apiserver's eviction REST handler (registry/core/pod/storage/eviction.go) decides it: a Pod
 * that is not running (Pending, Succeeded, Failed) or already being deleted goes at once; with no
 * PodDisruptionBudget selecting it, at once; with more than one, a 500; otherwise the budget's
 * status (written by the disruption controller) decides: not yet observed, or no disruption
 * allowed, a 429 the client retries; an unready Pod under `unhealthyPodEvictionPolicy: AlwaysAllow`
 * (or IfHealthyBudget while the budget is met) goes without spending one; else one disruption is
 * spent (the Pod recorded in `disruptedPods`) and the Pod is deleted as a DELETE would.
 */
import { selectorMatches, type LabelSelector } from './label-selector.js';
import { clone, isRecord, type KubeObject } from './objects.js';
import { handleDelete } from './rest-delete.js';
import { Rejection, decodeObject, fail, type ApiRequest, type Reply, type RestContext } from './rest-common.js';
import { internalError, notFound, statusBody, type StatusBody } from './status.js';

const PDBS = 'poddisruptionbudgets';
const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget.";

function tooManyRequests(cause: string, retryAfterSeconds: number): StatusBody {
  return statusBody({
    status: 'Failure',
    message: VIOLATION,
    reason: 'TooManyRequests',
    details: { causes: [{ reason: 'DisruptionBudget', message: cause }], ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}) },
    code: 429,
  });
}

const num = (value: unknown): number => (typeof value === 'number' ? value : 0);

function isReady(pod: KubeObject): boolean {
  const conditions = isRecord(pod.status) && Array.isArray(pod.status.conditions) ? pod.status.conditions : [];
  return conditions.some((c) => isRecord(c) && c.type === 'Ready' && c.status === 'True');
}

/** A Pod whose eviction needs no budget: not running, or already going. */
function canIgnoreBudget(pod: KubeObject): boolean {
  const phase = isRecord(pod.status) ? String(pod.status.phase ?? '') : '';
  return pod.metadata?.deletionTimestamp !== undefined || ['Succeeded', 'Failed', 'Pending'].includes(phase);
}

/** The eviction's answer when the budget lets it through: undefined; otherwise the refusal. */
function spendBudget(ctx: RestContext, pdb: KubeObject, pod: KubeObject): StatusBody | 'spent' | 'free' {
  const spec = isRecord(pdb.spec) ? pdb.spec : {};
  const status = isRecord(pdb.status) ? pdb.status : {};
  const name = pdb.metadata?.name ?? '';
  if (num(status.observedGeneration) < num(pdb.metadata?.generation)) return tooManyRequests(`The disruption budget ${name} is still being processed by the server.`, 0);
  if (!isReady(pod)) {
    const policy = String(spec.unhealthyPodEvictionPolicy ?? 'IfHealthyBudget');
    if (policy === 'AlwaysAllow' || num(status.currentHealthy) >= num(status.desiredHealthy)) return 'free';
  }
  if (num(status.disruptionsAllowed) <= 0) {
    return tooManyRequests(`The disruption budget ${name} needs ${num(status.desiredHealthy)} healthy pods and has ${num(status.currentHealthy)} currently`, 10);
  }
  const next = clone(pdb);
  const nextStatus = isRecord(next.status) ? next.status : {};
  nextStatus.disruptionsAllowed = num(status.disruptionsAllowed) - 1;
  nextStatus.disruptedPods = { ...(isRecord(status.disruptedPods) ? status.disruptedPods : {}), [pod.metadata?.name ?? '']: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
  next.status = nextStatus;
  ctx.store.update(PDBS, next, { manager: 'kube-apiserver', operation: 'Update' });
  return 'spent';
}

export async function handleEviction(ctx: RestContext, request: ApiRequest): Promise<Reply> {
  const { type, namespace, name = '' } = request.target;
  const eviction = decodeObject(request);
  if (eviction instanceof Rejection) return eviction.reply;
  const pod = ctx.store.get(type.key, namespace, name);
  if (!pod) return fail(notFound(type, name));
  if (!canIgnoreBudget(pod)) {
    const labels = pod.metadata?.labels ?? {};
    const budgets = ctx.store.list(PDBS, namespace).filter((pdb) => selectorMatches((isRecord(pdb.spec) ? pdb.spec.selector : undefined) as LabelSelector | undefined, labels));
    if (budgets.length > 1) return fail(internalError('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.'));
    const budget = budgets[0];
    if (budget) {
      const decision = spendBudget(ctx, budget, pod);
      if (typeof decision !== 'string') return fail(decision);
    }
  }
  const deleteOptions = isRecord(eviction.deleteOptions) ? eviction.deleteOptions : {};
  const deleted = await handleDelete(ctx, { ...request, target: { ...request.target, subresource: undefined }, body: JSON.stringify(deleteOptions), bytes: undefined, contentType: 'application/json' });
  if (deleted.status >= 300) return deleted;
  return { status: 201, body: statusBody({ status: 'Success', code: 201 }) };
}
