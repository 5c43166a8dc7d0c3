/**
 * One handler's run on one request, within its time: the context it gets, what it answers turned
 * into a verdict (a denial's status, a mutation's patch, warnings and audit annotations as
 * kube-apiserver keeps them), and the webhook's failurePolicy when it throws, answers nonsense or
 * runs out of time.
 */
import type { Logger } from 'pino';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { HandlerLogger, HandlerMetrics } from '../../admission/handler-services.js';
import { computePatch, copyObject, type PatchOperation } from '../../admission/patch.js';
import type { AdmissionContext, AdmissionRequest, KubeObject, Webhook } from '../../admission/types.js';
import { warningsAsShown } from '../../admission/warning-text.js';
import { handlerMetrics } from '../handler-metrics.js';

/** How a review ended, for logs and metrics. timeout/error are answered by failurePolicy. */
export type ReviewDecision = 'allowed' | 'denied' | 'timeout' | 'error';

export interface DenialStatus {
  code: number;
  message: string;
  reason?: string;
}

/** The answer to one review, already cleaned (warnings, annotations) and checked (patch only when allowed to). */
export interface Verdict {
  decision: ReviewDecision;
  allowed: boolean;
  status?: DenialStatus;
  /** Non-empty when present. */
  patch?: PatchOperation[];
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/** A review's verdict plus what the log line should mention. */
export interface ReviewRun {
  verdict: Verdict;
  /** Audit annotation keys the handler returned that kube-apiserver would refuse. */
  droppedAnnotations: readonly string[];
  /** Why the handler did not decide (thrown message or invalid answer); never the object. */
  failure?: string;
}

const TIMED_OUT = Symbol('timed out');

/**
 * An abort signal created only when a handler reads it: most handlers never do, and an
 * AbortController per review was a measurable share of the hot path. Read after the abort, it
 * is already aborted.
 */
class LazyAbort {
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/**
 * The request's Namespace as the caller knows it (undefined: not known, null: none), or how to
 * look it up: most handlers never read it, so the server passes a lookup that runs on first read.
 */
export type NamespaceObject = KubeObject | null | undefined | (() => KubeObject | null | undefined);

/**
 * The context a handler gets. A class, not an object literal with getters: V8 builds a literal
 * with accessors in its runtime on every call, and with one per rule per object that was about
 * a tenth of evaluate's CPU. `signal`, `log` and `namespaceObject` are getters, made on first use.
 */
class ReviewContext implements AdmissionContext {
  readonly dryRun: boolean;
  readonly webhook: Webhook;
  readonly metrics: HandlerMetrics;
  readonly #deadline: LazyAbort;
  readonly #services: HandlerServices;
  readonly #uid: string;
  #log: HandlerLogger | undefined;
  #namespace: NamespaceObject;

  constructor(webhook: Webhook, request: AdmissionRequest, deadline: LazyAbort, services: HandlerServices, namespaceObject: NamespaceObject) {
    this.dryRun = request.dryRun;
    this.webhook = webhook;
    this.metrics = services.metrics;
    this.#namespace = namespaceObject;
    this.#deadline = deadline;
    this.#services = services;
    this.#uid = request.uid;
  }

  get signal(): AbortSignal {
    return this.#deadline.signal;
  }

  /** Undefined: the namespace is not known (the server's cache does not have it, or none runs). */
  get namespaceObject(): KubeObject | null | undefined {
    if (typeof this.#namespace === 'function') this.#namespace = this.#namespace();
    return this.#namespace;
  }

  /** A pino child per review only for handlers that log: most never do. */
  get log(): HandlerLogger {
    return (this.#log ??= this.#services.logger.child({ uid: this.#uid, webhook: this.webhook.name }) as HandlerLogger);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return isRecord(value) && typeof value.then === 'function';
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The name part of a Kubernetes qualified name: what may follow `<webhook name>/` in an audit key. */
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const MAX_NAME_PART = 63;

export function isValidAuditKey(key: string): boolean {
  return key.length <= MAX_NAME_PART && QUALIFIED_NAME_PART.test(key);
}

/**
 * What the user will see of these warnings: control characters (which make kube-apiserver drop
 * a warning silently) cleaned out, empty ones and repeats dropped, and cut only where
 * kube-apiserver cuts (admission/warning-text.ts). Undefined when there are none.
 */
export function cleanWarnings(warnings: readonly unknown[] | undefined): string[] | undefined {
  if (warnings === undefined || warnings.length === 0) return undefined;
  const shown = warningsAsShown(warnings);
  return shown.length > 0 ? shown : undefined;
}

interface CleanedAnnotations {
  valid: Record<string, string> | undefined;
  /** Keys dropped because kube-apiserver would only log them (invalid key or non-string value). */
  dropped: readonly string[];
}

const NO_ANNOTATIONS: CleanedAnnotations = Object.freeze({ valid: undefined, dropped: Object.freeze([]) });

/** Keeps the entries whose key becomes a qualified name as `<webhook>/<key>` and whose value is a string. */
function cleanAuditAnnotations(annotations: Readonly<Record<string, unknown>> | undefined): CleanedAnnotations {
  if (annotations === undefined) return NO_ANNOTATIONS;
  const valid: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(annotations)) {
    if (isValidAuditKey(key) && typeof value === 'string') valid[key] = value;
    else dropped.push(key);
  }
  return { valid, dropped };
}

/** The answer failurePolicy dictates when the handler threw, answered nonsense, or ran out of time. */
export function failurePolicyVerdict(webhook: Webhook, cause: 'timeout' | 'error'): Verdict {
  const what = cause === 'timeout' ? 'could not decide in time' : 'failed with an internal error';
  if (webhook.failurePolicy === 'Ignore') {
    return {
      decision: cause,
      allowed: true,
      warnings: cleanWarnings([`webhook "${webhook.name}" ${what}; allowed by failurePolicy Ignore`]),
      auditAnnotations: { 'failed-open': cause },
    };
  }
  // 500 InternalError, as kube-apiserver itself answers a failed call under Fail: the user sees a
  // server-side failure, not a policy verdict (403) that was never reached.
  return {
    decision: cause,
    allowed: false,
    status: { code: 500, reason: 'InternalError', message: `webhook "${webhook.name}" ${what} (failurePolicy Fail)` },
  };
}

function denialStatus(decision: Record<string, unknown>): DenialStatus {
  if (typeof decision.message !== 'string' || decision.message === '') {
    throw new Error('handler denied without a message');
  }
  const code = typeof decision.code === 'number' && Number.isInteger(decision.code) ? decision.code : 403;
  const status: DenialStatus = { code: code < 400 ? 400 : code, message: decision.message };
  if (typeof decision.reason === 'string' && decision.reason !== '') status.reason = decision.reason;
  return status;
}

function mutationPatch(webhook: Webhook, request: AdmissionRequest, original: KubeObject | null, decision: Record<string, unknown>) {
  // Only a mutating webhook, only when there is an object to change (never on DELETE).
  if (webhook.type !== 'mutating' || !('object' in decision) || original === null || request.operation === 'DELETE') {
    return undefined;
  }
  if (!isRecord(decision.object)) throw new Error('handler returned a mutation whose object is not an object');
  const patch = computePatch(original, decision.object as KubeObject);
  return patch.length > 0 ? patch : undefined;
}

/** Turns what the handler returned into a verdict; throws when it is not a decision. */
function toRun(webhook: Webhook, request: AdmissionRequest, original: KubeObject | null, decision: unknown): ReviewRun {
  if (!isRecord(decision) || typeof decision.allowed !== 'boolean') {
    throw new Error('handler returned no decision ({ allowed: boolean } expected)');
  }
  const annotations = cleanAuditAnnotations(isRecord(decision.auditAnnotations) ? decision.auditAnnotations : undefined);
  const warnings = cleanWarnings(Array.isArray(decision.warnings) ? decision.warnings : undefined);
  const verdict: Verdict = decision.allowed
    ? { decision: 'allowed', allowed: true, patch: mutationPatch(webhook, request, original, decision) }
    : { decision: 'denied', allowed: false, status: denialStatus(decision) };
  if (warnings) verdict.warnings = warnings;
  if (annotations.valid) verdict.auditAnnotations = annotations.valid;
  return { verdict, droppedAnnotations: annotations.dropped };
}

/** The object as it arrived, kept apart so that a handler may edit request.object in place and return it. */
function snapshotOriginal(webhook: Webhook, request: AdmissionRequest): KubeObject | null {
  if (webhook.type !== 'mutating' || request.object === null || request.operation === 'DELETE') return null;
  return copyObject(request.object);
}

function failed(webhook: Webhook, cause: 'timeout' | 'error', failure: string): ReviewRun {
  return { verdict: failurePolicyVerdict(webhook, cause), droppedAnnotations: [], failure };
}

/** Resolves TIMED_OUT after `budgetMs` or as soon as `stop` aborts; `cancel` releases the timer and listener. */
function timeLimit(budgetMs: number, stop: AbortSignal | undefined): { timeUp: Promise<typeof TIMED_OUT>; cancel: () => void } {
  let cancel = (): void => undefined;
  const timeUp = new Promise<typeof TIMED_OUT>((resolve) => {
    const fire = (): void => resolve(TIMED_OUT);
    // Unreferenced: only the listening server keeps the process alive, never a pending review.
    const timer = setTimeout(fire, budgetMs).unref();
    stop?.addEventListener('abort', fire, { once: true });
    cancel = () => {
      clearTimeout(timer);
      stop?.removeEventListener('abort', fire);
    };
    if (stop?.aborted) fire();
  });
  return { timeUp, cancel };
}

/** Turns what a synchronous handler returned into the run; a nonsense answer gets the failurePolicy outcome. */
function decide(webhook: Webhook, request: AdmissionRequest, original: KubeObject | null, decision: unknown): ReviewRun {
  try {
    return toRun(webhook, request, original, decision);
  } catch (error) {
    return failed(webhook, 'error', errorMessage(error));
  }
}

/** An asynchronous handler's answer, bounded by `budgetMs` and `stop`. */
async function awaitDecision(
  webhook: Webhook,
  request: AdmissionRequest,
  original: KubeObject | null,
  pending: PromiseLike<unknown>,
  deadline: LazyAbort,
  budgetMs: number,
  stop: AbortSignal | undefined,
): Promise<ReviewRun> {
  const limit = timeLimit(budgetMs, stop);
  try {
    const result = await Promise.race([pending, limit.timeUp]);
    if (result === TIMED_OUT) {
      deadline.abort(new DOMException(`no decision within ${budgetMs} ms`, 'TimeoutError'));
      return failed(webhook, 'timeout', `no decision within ${budgetMs} ms`);
    }
    return toRun(webhook, request, original, result);
  } catch (error) {
    return failed(webhook, 'error', errorMessage(error));
  } finally {
    limit.cancel();
  }
}

/** What the server lends handlers: its logger (a child per review is made from it) and its metrics. */
export interface HandlerServices {
  logger: Logger;
  metrics: HandlerMetrics;
}

/** For runs outside a server that pass none (evaluate, audit): lines go nowhere, metrics to a registry of their own. */
const OFFLINE_SERVICES: HandlerServices = { logger: pino({ level: 'silent' }), metrics: handlerMetrics(new Registry()) };

/**
 * Runs the webhook's handler on `request` and decides the answer within `budgetMs`, or sooner
 * when `stop` aborts (the server is being torn down). A handler that throws, answers nonsense or
 * is still busy by then gets the failurePolicy outcome; its context.signal aborts at that
 * moment. `namespaceObject` reaches the handler's context when the caller knows it. Never throws
 * or rejects. A synchronous handler (the common case) is answered synchronously: no timer, no
 * promise, no extra turn of the event loop on the hot path. `original`: the object as it arrived,
 * when the caller keeps one the handler cannot reach (the simulation hands handlers a copy of
 * their own); otherwise a copy is taken before a mutating handler runs.
 */
export function runReview(
  webhook: Webhook,
  request: AdmissionRequest,
  budgetMs: number,
  stop?: AbortSignal,
  namespaceObject?: NamespaceObject,
  services: HandlerServices = OFFLINE_SERVICES,
  original?: KubeObject | null,
): ReviewRun | Promise<ReviewRun> {
  const deadline = new LazyAbort();
  const context = new ReviewContext(webhook, request, deadline, services, namespaceObject);
  let asArrived: KubeObject | null;
  let result: unknown;
  try {
    asArrived = original !== undefined && webhook.type === 'mutating' && request.operation !== 'DELETE' ? original : snapshotOriginal(webhook, request);
    result = (webhook.handler as (r: AdmissionRequest, c: AdmissionContext) => unknown)(request, context);
  } catch (error) {
    return failed(webhook, 'error', errorMessage(error));
  }
  if (isThenable(result)) return awaitDecision(webhook, request, asArrived, result, deadline, budgetMs, stop);
  return decide(webhook, request, asArrived, result);
}
