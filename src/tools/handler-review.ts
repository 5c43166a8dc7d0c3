/**
 * Handlers tested without a cluster, as the server runs them: one webhook through the server's
 * own review route (decode, the budget from `?timeout=`, the handler under failurePolicy,
 * cleaned warnings, the encoded answer), or every webhook of a policy as kube-apiserver calls
 * them (simulate). Whether kube-apiserver would call the webhook at all (rules, selectors,
 * matchConditions) is decided first, as it does.
 */
import pino, { type Logger } from 'pino';
import { Registry } from 'prom-client';
import { DEFAULT_EXCLUDED_NAMESPACES } from '../webhooks/excluded-namespaces.js';
import { namespaceObjectOf } from '../admission/namespace-object.js';
import { applyPatch, type PatchOperation } from '../admission/patch.js';
import { WebhookRegistry } from '../webhooks/registry.js';
import type { AdmissionRequest, KubeObject, Webhook } from '../admission/types.js';
import { webhookMatches } from '../webhooks/webhook-match.js';
import { handlerMetrics } from '../server/handler-metrics.js';
import { admissionMetrics } from '../server/review/metrics.js';
import { answerReview } from '../server/review/review.js';
import { asRegistered, type ObjectOutcome } from '../kube/evaluation/simulate.js';
import { simulate } from './evaluation.js';

/** How a review is run besides the webhook and the request. */
export interface ReviewOptions {
  /** The request's Namespace: what namespaceSelector is matched against and handlers read as context.namespaceObject. */
  namespaceObject?: KubeObject | null;
  /**
   * The `?timeout=` kube-apiserver sends, e.g. `2s` (default: the webhook's timeoutSeconds, as
   * kube-apiserver sends it). The handler gets what the server gives it: this minus a margin.
   */
  timeout?: string;
  /** Namespaces registration leaves out (default kube-system; the server adds its own namespace). */
  excludedNamespaces?: readonly string[];
  /** The AdmissionReview version kube-apiserver speaks (default admission.k8s.io/v1). */
  apiVersion?: 'admission.k8s.io/v1' | 'admission.k8s.io/v1beta1';
  /** Where the server's log lines and the handler's context.log lines go (default: nowhere). */
  logger?: Logger;
  /** The registry context.metrics registers on (default: one shared by every helper run). */
  metricsRegistry?: Registry;
}

/** What one webhook made of a request, as kube-apiserver would see it. */
export interface WebhookReview<T = KubeObject> {
  /** false: kube-apiserver would not call it (`why` says: no rule matches, a selector...). */
  called: boolean;
  why?: string;
  /** allowed, denied, timeout/error (answered by failurePolicy), skipped (not called). */
  decision: 'allowed' | 'denied' | 'timeout' | 'error' | 'skipped';
  allowed: boolean;
  /** The denial's code and message (also the failurePolicy Fail answer's). */
  code?: number;
  message?: string;
  reason?: string;
  warnings: string[];
  auditAnnotations: Record<string, string>;
  /** The JSONPatch the server sent (mutating webhooks that changed something). */
  patch?: PatchOperation[];
  /** request.object with the patch applied, as kube-apiserver stores it; null on DELETE. */
  object: T | null;
  /** Why failurePolicy answered: the handler's thrown message, or the missed deadline. */
  failure?: string;
  /** The AdmissionReview the server answered with, as JSON. */
  response?: Record<string, unknown>;
}

/** Counters of every review the helpers ran: one registry for the process, as a server has. */
const helperMetrics = new Registry();
const silent = pino({ level: 'silent' });

/**
 * The server's deadline timer is unreferenced (its listener keeps the process alive); a test
 * process has nothing else, so it is held open until the answer is decided.
 */
async function holdingProcessOpen<R>(answer: R | Promise<R>): Promise<R> {
  const keepAlive = setInterval(() => undefined, 60_000);
  try {
    return await answer;
  } finally {
    clearInterval(keepAlive);
  }
}

function skipped<T>(request: AdmissionRequest<T>, why: string): WebhookReview<T> {
  return { called: false, why, decision: 'skipped', allowed: true, warnings: [], auditAnnotations: {}, object: request.object };
}

interface WireResponse {
  allowed: boolean;
  status?: { code: number; message: string; reason?: string };
  patch?: string;
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/**
 * Runs `webhook` on `request` exactly as the server answers kube-apiserver: whether it would be
 * called at all, then the server's review route with the webhook's failurePolicy and the
 * deadline from `options.timeout`. Resolves with the decision, warnings, audit annotations, the
 * patch and the patched object. Throws when the request is no valid AdmissionRequest (the server
 * would answer 400).
 */
export async function reviewWebhook<T>(webhook: Webhook, request: AdmissionRequest<T>, options: ReviewOptions = {}): Promise<WebhookReview<T>> {
  const untyped = request as unknown as AdmissionRequest;
  const registered = asRegistered(webhook, options.excludedNamespaces ?? DEFAULT_EXCLUDED_NAMESPACES);
  const match = webhookMatches(registered, untyped, options.namespaceObject);
  if (match.matched === false) return skipped(request, match.why);
  if (match.matched === 'error') return { called: false, why: match.message, decision: 'denied', allowed: false, code: 403, message: match.message, warnings: [], auditAnnotations: {}, object: request.object };
  const deps = {
    registry: new WebhookRegistry([webhook]),
    logger: options.logger ?? silent,
    metrics: admissionMetrics(helperMetrics),
    // The server's own shaping (a VAP's namespaceObject) of the Namespace given.
    namespaces: { get: () => (options.namespaceObject ? namespaceObjectOf(options.namespaceObject) : undefined) },
    handlerServices: { logger: options.logger ?? silent, metrics: handlerMetrics(options.metricsRegistry ?? helperMetrics) },
  };
  const body = { apiVersion: options.apiVersion ?? 'admission.k8s.io/v1', kind: 'AdmissionReview', request: structuredClone(untyped) };
  const reply = await holdingProcessOpen(answerReview(deps, { type: webhook.type, name: webhook.name, timeout: options.timeout ?? `${webhook.timeoutSeconds}s`, body }));
  const answer = JSON.parse(reply.body) as { response?: WireResponse; error?: string };
  if (reply.statusCode !== 200 || !answer.response || !reply.run) throw new TypeError(`the server answered ${reply.statusCode}: ${answer.error ?? reply.body}`);
  const { response } = answer;
  const patch = response.patch ? (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as PatchOperation[]) : undefined;
  const review: WebhookReview<T> = {
    called: true,
    decision: reply.run.verdict.decision,
    allowed: response.allowed,
    warnings: response.warnings ?? [],
    auditAnnotations: response.auditAnnotations ?? {},
    object: patch && request.object ? applyPatch(request.object, patch) : request.object,
    response: answer as Record<string, unknown>,
  };
  if (response.status) {
    review.code = response.status.code;
    review.message = response.status.message;
    if (response.status.reason) review.reason = response.status.reason;
  }
  if (patch) review.patch = patch;
  if (reply.run.failure !== undefined) review.failure = reply.run.failure;
  return review;
}

/** How a whole policy is run on a request. */
export type PolicyReviewOptions = Omit<ReviewOptions, 'timeout' | 'apiVersion' | 'logger' | 'metricsRegistry'>;

/**
 * Runs `request` through `webhooks` as kube-apiserver would: the mutating ones whose rules,
 * selectors and matchConditions match, one after another with each patch applied, then the
 * validating ones on the mutated object; each handler under its failurePolicy and the deadline
 * the server gives it. `outcome.object` is what would be stored, `outcome.denial` what the user
 * would read.
 */
export function reviewPolicy(webhooks: readonly Webhook[], request: AdmissionRequest, options: PolicyReviewOptions = {}): Promise<ObjectOutcome> {
  return holdingProcessOpen(
    simulate(webhooks, request, {
      excludedNamespaces: options.excludedNamespaces ?? DEFAULT_EXCLUDED_NAMESPACES,
      ...(options.namespaceObject !== undefined ? { namespaceObject: options.namespaceObject } : {}),
    }),
  );
}
