/**
 * One object through the policy as kube-apiserver would take it: the mutating webhooks whose
 * rules, selectors and matchConditions match, one after another in registered order, each
 * patch applied; then the validating webhooks on the mutated object. Handlers run exactly as
 * the server runs them: the caller passes the server's own run (failurePolicy on errors and
 * timeouts, cleaned warnings), which this floor cannot import.
 */
import type { Authorize } from '../../cel/library/authorizer.js';
import { applyPatch, copyObject, type PatchOperation } from '../../admission/patch.js';
import { readsRequestOnly } from '../../policy/rule-handler.js';
import type { AdmissionRequest, KubeObject, Webhook, WebhookType } from '../../admission/types.js';
import { webhookMatches } from '../../webhooks/webhook-match.js';
import { namespaceSelectorExcluding } from '../../webhooks/excluded-namespaces.js';
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
  /** Skipped by a matchCondition: one was false, or errored under failurePolicy Ignore (not by its rules or selectors). */
  skippedBy?: 'matchCondition' | 'matchConditionError';
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

/** What the server's review path decided for one handler run (its Verdict, structurally). */
export interface HandlerVerdict {
  decision: 'allowed' | 'denied' | 'timeout' | 'error';
  allowed: boolean;
  status?: { code: number; message: string };
  patch?: PatchOperation[];
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/** One handler run as the server's review path makes it: the verdict, and why the handler did not decide. */
export interface HandlerRun {
  verdict: HandlerVerdict;
  failure?: string;
}

/**
 * Runs `webhook`'s handler on `request` as the server does when kube-apiserver calls it with the
 * webhook's timeoutSeconds (failurePolicy on errors and timeouts); `original` is the object as it
 * arrived (the handler gets a copy of its own).
 */
export type RunHandler = (webhook: Webhook, request: AdmissionRequest, namespaceObject: KubeObject | null, original: KubeObject | null) => HandlerRun | Promise<HandlerRun>;

/** What a simulation needs besides the webhooks and the request. */
export interface SimulationPathOptions {
  /** How each handler runs: the server's review path (tools and the background audit pass the same). */
  run: RunHandler;
  /** The server's own namespace and the policy's excludedNamespaces: registration leaves them out. */
  excludedNamespaces: readonly string[];
  namespaceObject?: KubeObject | null;
  /** Answers the authorizer checks of matchConditions, as kube-apiserver's authorizer would. */
  authorize?: Authorize;
}

/** The webhook as registered: its namespaceSelector also excludes the excluded namespaces. */
export function asRegistered(webhook: Webhook, excluded: readonly string[]): Webhook {
  return { ...webhook, namespaceSelector: namespaceSelectorExcluding(webhook.namespaceSelector, excluded) };
}

function outcomeOf(webhook: Webhook, verdict: HandlerVerdict): WebhookOutcome {
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

/** kube-apiserver's words for a denial (contract 2.3) or a matchCondition error (403). */
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

function finished(webhook: Webhook, run: HandlerRun): WebhookOutcome {
  const outcome = outcomeOf(webhook, run.verdict);
  if (run.failure) outcome.why = run.failure;
  return outcome;
}

function call(webhook: Webhook, request: AdmissionRequest, options: SimulationPathOptions): WebhookOutcome | Promise<WebhookOutcome> {
  const matched = webhookMatches(webhook, request, options.namespaceObject, options.authorize);
  if (matched.matched === false) {
    const skippedBy = matched.condition === 'false' ? 'matchCondition' : matched.condition === 'error' ? 'matchConditionError' : undefined;
    return { webhook: webhook.name, type: webhook.type, decision: 'skipped', allowed: true, why: matched.why, ...(skippedBy ? { skippedBy } : {}), warnings: [], auditAnnotations: {} };
  }
  if (matched.matched === 'error') {
    return { webhook: webhook.name, type: webhook.type, decision: 'denied', allowed: false, message: matched.message, code: 403, warnings: [], auditAnnotations: {} };
  }
  // The handler gets a copy (inputFor): the request's own object is the original its patch is computed against.
  const run = options.run(webhook, inputFor(webhook, request), options.namespaceObject ?? null, request.object);
  return run instanceof Promise ? run.then((settled) => finished(webhook, settled)) : finished(webhook, run);
}

/** The webhooks as registration publishes them (the excluded namespaces merged into each namespaceSelector). */
export function registeredWebhooks(webhooks: readonly Webhook[], excludedNamespaces: readonly string[]): Webhook[] {
  return webhooks.map((w) => asRegistered(w, excludedNamespaces));
}

/** Runs `request` through `webhooks` (policy order, custom ones after) and reports every step. */
export async function simulate(webhooks: readonly Webhook[], request: AdmissionRequest, options: SimulationPathOptions): Promise<ObjectOutcome> {
  return simulateRegistered(registeredWebhooks(webhooks, options.excludedNamespaces), request, options);
}

/** simulate() for webhooks already as registered (registeredWebhooks): what a run over many objects calls. */
export async function simulateRegistered(registered: readonly Webhook[], request: AdmissionRequest, options: SimulationPathOptions): Promise<ObjectOutcome> {
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
