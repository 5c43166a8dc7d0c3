/**
 * The two admission phases (contract 3.7): mutating webhooks one by one with reinvocation,
 * validating webhooks in parallel; failurePolicy applied to call errors (2.6).
 */
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionSource, KubeObject, StatusBody } from '../fake-apiserver/index.js';
import { internalError } from '../fake-apiserver/status.js';
import type { AuditAnnotations, WarningCollector } from './annotations.js';
import type { ConnectionPools } from './connection-pools.js';
import { callWebhook, type CallSpec, type Invocation } from './call.js';
import { CallError, FinalStatus, denial, dryRunUnsupported, timeoutStatus } from './outcomes.js';
import { applyWebhookPatch } from './patching.js';
import type { ReviewContext } from './review.js';
import { configuredWebhooks, matchingWebhooks, shouldCall, type MatchTarget } from './select.js';
import type { AdmitRequest, CallRecord, ServiceResolver } from './types.js';
import type { VerifiedResponse } from './verify.js';

const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];

export interface DispatchContext {
  /** The kube-apiserver that serves the request: its caches decide which webhooks are called. */
  source: AdmissionSource;
  pools: ConnectionPools;
  resolveService: ServiceResolver;
  calls: CallRecord[];
  request: AdmitRequest;
  review: ReviewContext;
  parentDeadline: number;
  warnings: WarningCollector;
  audit: AuditAnnotations;
}

/** The request as the phase sees it now: for mutating webhooks, the object as the earlier patches left it. */
const matchTarget = (ctx: DispatchContext): MatchTarget => ({
  namespace: ctx.review.namespace,
  name: ctx.review.name,
  object: ctx.review.object,
  oldObject: ctx.review.oldObject,
});

function refuseDryRun(ctx: DispatchContext, invocation: Invocation): void {
  if (ctx.request.dryRun && !NO_SIDE_EFFECTS.includes(invocation.hook.sideEffects ?? '')) throw new FinalStatus(dryRunUnsupported(invocation.hook.name));
}

/** Whether the mutating webhook is called now, judged on the object as it is at this point. */
function callsNow(ctx: DispatchContext, invocation: Invocation): boolean {
  const decision = shouldCall(ctx.source, invocation.hook, ctx.request, matchTarget(ctx));
  if (typeof decision !== 'boolean') throw new FinalStatus(decision);
  return decision;
}

/** The reinvocation context tells webhooks apart as kube-apiserver's accessors do: configuration, name, position. */
const invocationKey = (invocation: Invocation, index: number): string => `${invocation.configuration}/${invocation.hook.name}/${index}`;

const callErrorStatus = (hookName: string, error: CallError): StatusBody => internalError(`failed calling webhook "${hookName}": ${error.message}`);

function call(ctx: DispatchContext, invocation: Invocation, phase: CallSpec['phase'], round: number): Promise<VerifiedResponse> {
  const agent = ctx.pools.agentFor(ctx.source, invocation.hook);
  return callWebhook({ invocation, phase, round, request: ctx.request, context: ctx.review, parentDeadline: ctx.parentDeadline, apiserver: ctx.source.name }, agent, ctx.resolveService, ctx.calls);
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
    const patched = await applyWebhookPatch(hook.name, ctx.review.object, response.patch, ctx.request.kind);
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
 * Round 0 goes through every configured webhook in order and calls those that match the object
 * as the earlier patches left it (a label one webhook adds can bring the object into the next
 * one's objectSelector). When one changes the object, the IfNeeded webhooks invoked before it are
 * called once more in round 1 (a change made by others), if they still match; round 1 reads the
 * configurations again, as kube-apiserver's reinvoked dispatch does. The index in the audit keys
 * is the webhook's position among all configured ones, as kube-apiserver counts it.
 */
export async function runMutating(ctx: DispatchContext): Promise<void> {
  const invokedReinvocable = new Set<string>();
  let reinvoke = new Set<string>();
  for (const [index, invocation] of configuredWebhooks(ctx.source, 'mutatingwebhookconfigurations').entries()) {
    if (!callsNow(ctx, invocation)) continue;
    refuseDryRun(ctx, invocation);
    const changed = await mutateOnce(ctx, invocation, 0, index);
    if (changed) reinvoke = new Set(invokedReinvocable);
    if (invocation.hook.reinvocationPolicy === 'IfNeeded') invokedReinvocable.add(invocationKey(invocation, index));
  }
  if (reinvoke.size === 0) return;
  for (const [index, invocation] of configuredWebhooks(ctx.source, 'mutatingwebhookconfigurations').entries()) {
    if (!callsNow(ctx, invocation) || !reinvoke.has(invocationKey(invocation, index))) continue;
    await mutateOnce(ctx, invocation, 1, index);
  }
}

/** All matching validating webhooks at once; the first error to arrive is the answer. */
export async function runValidating(ctx: DispatchContext): Promise<void> {
  const invocations = matchingWebhooks(ctx.source, 'validatingwebhookconfigurations', ctx.request, matchTarget(ctx));
  if (!Array.isArray(invocations)) throw new FinalStatus(invocations);
  for (const invocation of invocations) refuseDryRun(ctx, invocation);
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
