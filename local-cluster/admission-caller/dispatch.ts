/**
 * The two admission phases (contract 3.7): mutating webhooks one by one with reinvocation,
 * validating webhooks in parallel; failurePolicy applied to call errors (2.6).
 */
import type { Agent } from 'node:https';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, ObjectStore, StatusBody } from '../fake-apiserver/index.js';
import { internalError } from '../fake-apiserver/status.js';
import type { AuditAnnotations, WarningCollector } from './annotations.js';
import { callWebhook, type CallSpec, type Invocation } from './call.js';
import { CallError, FinalStatus, denial, dryRunUnsupported, timeoutStatus } from './outcomes.js';
import { applyWebhookPatch } from './patching.js';
import type { ReviewContext } from './review.js';
import { matchingWebhooks } from './select.js';
import type { AdmitRequest, CallRecord, ServiceResolver } from './types.js';
import type { VerifiedResponse } from './verify.js';

const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];

export interface DispatchContext {
  store: ObjectStore;
  agent: Agent;
  resolveService: ServiceResolver;
  calls: CallRecord[];
  request: AdmitRequest;
  review: ReviewContext;
  parentDeadline: number;
  warnings: WarningCollector;
  audit: AuditAnnotations;
}

function invocationsOf(ctx: DispatchContext, resource: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations'): Invocation[] {
  const matched = matchingWebhooks(ctx.store, resource, ctx.request, ctx.review.namespace, ctx.review.object, ctx.review.name);
  if (!Array.isArray(matched)) throw new FinalStatus(matched);
  for (const { hook } of matched) {
    if (ctx.request.dryRun && !NO_SIDE_EFFECTS.includes(hook.sideEffects ?? '')) throw new FinalStatus(dryRunUnsupported(hook.name));
  }
  return matched;
}

const callErrorStatus = (hookName: string, error: CallError): StatusBody => internalError(`failed calling webhook "${hookName}": ${error.message}`);

function call(ctx: DispatchContext, invocation: Invocation, phase: CallSpec['phase'], round: number): Promise<VerifiedResponse> {
  return callWebhook({ invocation, phase, round, request: ctx.request, context: ctx.review, parentDeadline: ctx.parentDeadline }, ctx.agent, ctx.resolveService, ctx.calls);
}

/** One mutating call; returns whether it changed the object. Throws FinalStatus to end admission. */
async function mutateOnce(ctx: DispatchContext, invocation: Invocation, round: number, index: number): Promise<boolean> {
  const { hook } = invocation;
  const key = `round_${round}_index_${index}`;
  try {
    const response = await call(ctx, invocation, 'mutating', round);
    ctx.warnings.add(response.warnings);
    ctx.audit.addFromWebhook(hook.name, response.auditAnnotations);
    if (!response.allowed) throw new FinalStatus(denial(hook.name, response.status));
    const patched = applyWebhookPatch(hook.name, ctx.review.object, response.patch);
    const changed = !isDeepStrictEqual(patched, ctx.review.object);
    ctx.review.object = patched;
    ctx.audit.set(`mutation.webhook.admission.k8s.io/${key}`, JSON.stringify({ configuration: invocation.configuration, webhook: hook.name, mutated: changed }));
    return changed;
  } catch (error) {
    if (!(error instanceof CallError)) throw error;
    if (hook.failurePolicy !== 'Ignore') throw new FinalStatus(callErrorStatus(hook.name, error));
    if (performance.now() >= ctx.parentDeadline) throw new FinalStatus(timeoutStatus());
    ctx.audit.set(`failed-open.mutation.webhook.admission.k8s.io/${key}`, hook.name);
    return false;
  }
}

/**
 * Round 0 calls every matching webhook in order. When one changes the object, the IfNeeded
 * webhooks invoked before it are called once more in round 1 (a change made by others).
 */
export async function runMutating(ctx: DispatchContext): Promise<void> {
  const invocations = invocationsOf(ctx, 'mutatingwebhookconfigurations');
  const invokedReinvocable = new Set<Invocation>();
  let reinvoke = new Set<Invocation>();
  for (const [index, invocation] of invocations.entries()) {
    const changed = await mutateOnce(ctx, invocation, 0, index);
    if (changed) reinvoke = new Set(invokedReinvocable);
    if (invocation.hook.reinvocationPolicy === 'IfNeeded') invokedReinvocable.add(invocation);
  }
  for (const [index, invocation] of invocations.entries()) {
    if (reinvoke.has(invocation)) await mutateOnce(ctx, invocation, 1, index);
  }
}

/** All matching validating webhooks at once; the first error to arrive is the answer. */
export async function runValidating(ctx: DispatchContext): Promise<void> {
  const invocations = invocationsOf(ctx, 'validatingwebhookconfigurations');
  if (invocations.length > 0 && performance.now() >= ctx.parentDeadline) throw new FinalStatus(timeoutStatus());
  const errors: StatusBody[] = [];
  await Promise.all(
    invocations.map(async (invocation, index) => {
      const { hook } = invocation;
      try {
        const response = await call(ctx, invocation, 'validating', 0);
        ctx.warnings.add(response.warnings);
        ctx.audit.addFromWebhook(hook.name, response.auditAnnotations);
        if (!response.allowed) errors.push(denial(hook.name, response.status));
      } catch (error) {
        if (!(error instanceof CallError)) throw error;
        if (hook.failurePolicy === 'Ignore') ctx.audit.set(`failed-open.validating.webhook.admission.k8s.io/round_0_index_${index}`, hook.name);
        else errors.push(callErrorStatus(hook.name, error));
      }
    }),
  );
  const first = errors[0];
  if (first) throw new FinalStatus(first);
}

/** Validating webhooks of a CREATE run after the store filled in uid, creationTimestamp and the generated name. */
export function fillCreateSystemFields(object: KubeObject, now: string, uid: string, suffix: string): void {
  const meta = (object.metadata ??= {});
  if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${suffix}`;
  meta.uid = uid;
  meta.creationTimestamp = now;
}
