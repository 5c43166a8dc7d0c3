/**
 * One object through the policy as kube-apiserver would take it: the mutating webhooks whose
 * rules, selectors and matchConditions match, one after another in registered order, each
 * patch applied; then the validating webhooks on the mutated object. Handlers run exactly as
 * the server runs them (runReview: failurePolicy on errors and timeouts, cleaned warnings).
 */
import { namespaceSelectorExcluding } from '../registration/desired-configurations.js';
import type { Authorize } from '../cel/library/authorizer.js';
import { applyPatch, copyObject, type PatchOperation } from '../admission/patch.js';
import { readsRequestOnly } from '../policy/rule-handler.js';
import type { AdmissionRequest, KubeObject, LabelSelector, Webhook, WebhookType } from '../admission/types.js';
import { webhookMatches } from '../webhooks/webhook-match.js';
import { answerBudgetMs, callerTimeoutMs } from '../server/review/review.js';
import { runReview, type ReviewRun } from '../server/review/run-handler.js';
import { validatingPhaseRequest } from './admission-request.js';
import { decodedInPlace } from './kube-defaults/apply-defaults.js';

/** What one webhook did with a request in a simulation: called or why not, and its answer. */
export interface WebhookOutcome {
  webhook: string;
  type: WebhookType;
  /** allowed, denied, or timeout/error (answered by failurePolicy); skipped: not called, `why` says. */
  decision: 'allowed' | 'denied' | 'timeout' | 'error' | 'skipped';
  /** Whether the request may go on after this webhook (skipped: true). */
  allowed: boolean;
  why?: string;
  message?: string;
  code?: number;
  warnings: string[];
  auditAnnotations: Record<string, string>;
  patch?: PatchOperation[];
}

/** What kube-apiserver would make of one request: every webhook's outcome and the final decision. */
export interface ObjectOutcome {
  request: AdmissionRequest;
  /** The object after every mutating webhook (what would be stored). */
  object: KubeObject | null;
  webhooks: WebhookOutcome[];
  allowed: boolean;
  /** The webhook that denied and its message, as kube-apiserver words it. */
  denial?: { webhook: string; code: number; message: string };
}

/** What a simulation needs besides the webhooks and the request. */
export interface SimulationOptions {
  /** The server's own namespace and the policy's excludedNamespaces: registration leaves them out. */
  excludedNamespaces: readonly string[];
  namespaceObject?: KubeObject | null;
  /** Per webhook, like the server's budget under `?timeout=` (default: what the server gives a call with the webhook's timeoutSeconds). */
  budgetMs?: number;
  /** Answers the authorizer checks of matchConditions, as kube-apiserver's authorizer would. */
  authorize?: Authorize;
}

/** The webhook as registered: its namespaceSelector also excludes the excluded namespaces. */
export function asRegistered(webhook: Webhook, excluded: readonly string[]): Webhook {
  return { ...webhook, namespaceSelector: namespaceSelectorExcluding(webhook.namespaceSelector, excluded) as LabelSelector };
}

function outcomeOf(webhook: Webhook, verdict: Awaited<ReturnType<typeof runReview>>['verdict']): WebhookOutcome {
  const outcome: WebhookOutcome = {
    webhook: webhook.name,
    type: webhook.type,
    decision: verdict.decision,
    allowed: verdict.allowed,
    warnings: verdict.warnings ?? [],
    auditAnnotations: verdict.auditAnnotations ?? {},
  };
  if (verdict.status) {
    outcome.message = verdict.status.message;
    outcome.code = verdict.status.code;
  }
  if (verdict.patch) outcome.patch = verdict.patch;
  return outcome;
}

/** kube-apiserver's words for a denial (local-cluster/CONTRACT.md 2.3) or a matchCondition error (403). */
function denialOf(outcome: WebhookOutcome): ObjectOutcome['denial'] {
  return { webhook: outcome.webhook, code: outcome.code ?? 403, message: `admission webhook "${outcome.webhook}" denied the request: ${outcome.message ?? 'without explanation'}` };
}

/**
 * What the handler is given: its own copy, as each webhook gets its own in kube-apiserver (a
 * mutating handler edits it in place); the shared request for handlers known to only read it.
 */
function inputFor(webhook: Webhook, request: AdmissionRequest): AdmissionRequest {
  if (webhook.type === 'validating' && readsRequestOnly(webhook.handler)) return request;
  return { ...request, object: request.object && copyObject(request.object), oldObject: request.oldObject && copyObject(request.oldObject) };
}

function finished(webhook: Webhook, run: ReviewRun): WebhookOutcome {
  const outcome = outcomeOf(webhook, run.verdict);
  if (run.failure) outcome.why = run.failure;
  return outcome;
}

function call(webhook: Webhook, request: AdmissionRequest, options: SimulationOptions): WebhookOutcome | Promise<WebhookOutcome> {
  const matched = webhookMatches(webhook, request, options.namespaceObject, options.authorize);
  if (matched.matched === false) return { webhook: webhook.name, type: webhook.type, decision: 'skipped', allowed: true, why: matched.why, warnings: [], auditAnnotations: {} };
  if (matched.matched === 'error') {
    return { webhook: webhook.name, type: webhook.type, decision: 'denied', allowed: false, message: matched.message, code: 403, warnings: [], auditAnnotations: {} };
  }
  // kube-apiserver sends ?timeout= of the webhook's timeoutSeconds; the server answers a margin before it.
  const budget = options.budgetMs ?? answerBudgetMs(callerTimeoutMs(undefined, webhook.timeoutSeconds));
  // The handler gets a copy (inputFor): the request's own object is the original its patch is computed against.
  const run = runReview(webhook, inputFor(webhook, request), budget, undefined, options.namespaceObject ?? null, undefined, request.object);
  return run instanceof Promise ? run.then((settled) => finished(webhook, settled)) : finished(webhook, run);
}

/** The webhooks as registration publishes them (the excluded namespaces merged into each namespaceSelector). */
export function registeredWebhooks(webhooks: readonly Webhook[], excludedNamespaces: readonly string[]): Webhook[] {
  return webhooks.map((w) => asRegistered(w, excludedNamespaces));
}

/** Runs `request` through `webhooks` (policy order, custom ones after) and reports every step. */
export async function simulate(webhooks: readonly Webhook[], request: AdmissionRequest, options: SimulationOptions): Promise<ObjectOutcome> {
  return simulateRegistered(registeredWebhooks(webhooks, options.excludedNamespaces), request, options);
}

/** simulate() for webhooks already as registered (registeredWebhooks): what a run over many objects calls. */
export async function simulateRegistered(registered: readonly Webhook[], request: AdmissionRequest, options: SimulationOptions): Promise<ObjectOutcome> {
  const outcomes: WebhookOutcome[] = [];
  let current: AdmissionRequest = request;
  for (const webhook of registered) {
    if (webhook.type !== 'mutating') continue;
    const called = call(webhook, current, options);
    const outcome = called instanceof Promise ? await called : called;
    outcomes.push(outcome);
    if (!outcome.allowed) return { request, object: current.object, webhooks: outcomes, allowed: false, denial: denialOf(outcome) };
    // kube-apiserver decodes and defaults a patched object again before the next webhook.
    // applyPatch returns a copy of its own, the patch's values copied too: it is decoded in place
    // and the defaults land in the object, never in the patch reported.
    if (outcome.patch && current.object) current = { ...current, object: decodedInPlace(applyPatch(current.object, outcome.patch)) };
  }
  current = validatingPhaseRequest(current);
  const calls = registered.filter((w) => w.type === 'validating').map((w) => call(w, current, options));
  const validating = calls.some((c) => c instanceof Promise) ? await Promise.all(calls) : (calls as WebhookOutcome[]);
  outcomes.push(...validating);
  const denied = validating.find((o) => !o.allowed);
  return { request, object: current.object, webhooks: outcomes, allowed: !denied, ...(denied ? { denial: denialOf(denied) } : {}) };
}
