import type { Logger } from 'pino';
import { namespaceObjectFrom, type NamespaceSource } from '../policy/namespace-object.js';
import type { WebhookRegistry } from '../policy/registry.js';
import type { AdmissionRequest, WebhookType } from '../policy/types.js';
import { answerBudgetMs, callerTimeoutMs } from './deadline.js';
import type { AdmissionMetrics } from './metrics.js';
import { decodeReview, InvalidReviewError, type DecodedReview } from './review-decode.js';
import { encodeReview } from './review-encode.js';
import { runReview, type ReviewRun } from './run-review.js';
import { isServableWebhookName, unservedVerdict } from './unserved-webhook.js';

/** What the HTTP layer sends back for one POST to a webhook path. */
export interface RouteReply {
  statusCode: number;
  /** Serialised JSON. */
  body: string;
}

export interface ReviewRouteDeps {
  registry: WebhookRegistry;
  logger: Logger;
  metrics: AdmissionMetrics;
  /** Aborts when the server gives up on in-flight work (close deadline): pending reviews end at once. */
  stop?: AbortSignal;
  /** Where context.namespaceObject comes from; without it, a namespaced request's is unknown (undefined). */
  namespaces?: NamespaceSource;
}

export interface ReviewCall {
  type: WebhookType;
  name: string;
  /** The raw `?timeout=` value, if any. */
  timeout: string | undefined;
  /** Parsed JSON body. */
  body: unknown;
}

export function errorBody(message: string): string {
  return JSON.stringify({ error: message });
}

function objectName(request: AdmissionRequest): string | undefined {
  return request.name ?? request.object?.metadata?.name ?? request.oldObject?.metadata?.name;
}

/**
 * Allowed reviews with nothing to say (no warning, no audit annotation) are the bulk of the
 * traffic (every Pod write in the cluster) and kube-apiserver's audit log records them anyway:
 * debug. Everything a cluster operator acts on (denials, warnings, audit annotations) is info,
 * answers by failurePolicy warn.
 */
function reviewLogLevel(run: ReviewRun): 'warn' | 'info' | 'debug' {
  if (run.failure !== undefined) return 'warn';
  const { verdict } = run;
  const warned = (verdict.warnings?.length ?? 0) > 0;
  const audited = verdict.auditAnnotations !== undefined && Object.keys(verdict.auditAnnotations).length > 0;
  if (!verdict.allowed || warned || audited) return 'info';
  return 'debug';
}

function logReview(logger: Logger, webhook: string, request: AdmissionRequest, run: ReviewRun, ms: number): void {
  const level = reviewLogLevel(run);
  // The line is not even built when its level is off: at the default level that is most reviews.
  if (!logger.isLevelEnabled(level)) return;
  const { verdict } = run;
  const line = {
    uid: request.uid,
    kind: request.kind.kind,
    namespace: request.namespace,
    name: objectName(request),
    operation: request.operation,
    webhook,
    decision: verdict.decision,
    allowed: verdict.allowed,
    dryRun: request.dryRun,
    patched: verdict.patch !== undefined,
    ms: Math.round(ms * 1000) / 1000,
  };
  if (level === 'warn') logger.warn({ ...line, failure: run.failure }, 'admission review answered by failurePolicy');
  else logger[level](line, 'admission review');
}

function logDroppedAnnotations(logger: Logger, webhook: string, request: AdmissionRequest, run: ReviewRun): void {
  if (run.droppedAnnotations.length === 0) return;
  logger.warn(
    { uid: request.uid, webhook, keys: run.droppedAnnotations },
    'dropped audit annotations that kube-apiserver would refuse (key must be a qualified-name part, value a string)',
  );
}

/** The review in `body`, or the 400 that says what is wrong with it (logged and counted under `webhookLabel`). */
function decodeOrReject(deps: ReviewRouteDeps, body: unknown, webhookLabel: string, logFields: Record<string, unknown>): DecodedReview | RouteReply {
  try {
    return decodeReview(body);
  } catch (error) {
    if (!(error instanceof InvalidReviewError)) throw error;
    deps.logger.warn({ ...logFields, error: error.message }, 'invalid admission review');
    deps.metrics.webhook(webhookLabel).countRequest('', 'invalid');
    return { statusCode: 400, body: errorBody(error.message) };
  }
}

/** The label of invalid requests to a webhook this replica does not serve (not a valid webhook name). */
const UNSERVED_LABEL = '_unserved';

/**
 * A name this replica does not serve: a well-formed review is allowed with a warning (replicas on
 * different policy versions must not fail kube-apiserver's calls), logged and counted; a body
 * that is no review is still a 400, and a name no version could serve a 404.
 */
function answerUnserved(deps: ReviewRouteDeps, call: ReviewCall): RouteReply {
  if (!isServableWebhookName(call.name)) {
    deps.logger.warn({ type: call.type, webhook: call.name }, 'review for a path that is no webhook name');
    deps.metrics.webhook(UNSERVED_LABEL).countRequest('', 'invalid');
    return { statusCode: 404, body: errorBody(`no ${call.type} webhook "${call.name}": webhook names are DNS-1123 labels (lowercase letters, digits and "-")`) };
  }
  const decoded = decodeOrReject(deps, call.body, UNSERVED_LABEL, { type: call.type, webhook: call.name });
  if ('statusCode' in decoded) return decoded;
  const { request } = decoded;
  deps.metrics.unknownWebhook.inc({ type: call.type, webhook: deps.metrics.unknownWebhookLabels.label(call.type, call.name) });
  deps.logger.warn(
    { uid: request.uid, type: call.type, webhook: call.name, kind: request.kind.kind, namespace: request.namespace, name: objectName(request), operation: request.operation },
    'review for a webhook this replica does not serve (yet or any more): allowed with a warning',
  );
  return { statusCode: 200, body: encodeReview(decoded.apiVersion, request.uid, unservedVerdict(call.name)) };
}

/** Encodes, counts and logs a decided review. */
function finishReview(deps: ReviewRouteDeps, webhookName: string, decoded: DecodedReview, run: ReviewRun, started: number): RouteReply {
  const { request } = decoded;
  const body = encodeReview(decoded.apiVersion, request.uid, run.verdict);
  const ms = performance.now() - started;
  const counts = deps.metrics.webhook(webhookName);
  counts.countRequest(request.operation, run.verdict.decision);
  counts.observeDuration(ms / 1000);
  logReview(deps.logger, webhookName, request, run, ms);
  logDroppedAnnotations(deps.logger, webhookName, request, run);
  return { statusCode: 200, body };
}

/**
 * Answers one review: resolves the webhook at request time (the registry may have been replaced),
 * decodes, runs the handler within the caller's deadline and encodes the verdict. Synchronous
 * when the handler is: the in-flight gauge then never sees the review (no scrape can fall
 * between its start and its end), so only asynchronous handlers move it.
 */
export function answerReview(deps: ReviewRouteDeps, call: ReviewCall): RouteReply | Promise<RouteReply> {
  const started = performance.now();
  const webhook = deps.registry.lookup(call.type, call.name);
  if (!webhook) return answerUnserved(deps, call);
  const decoded = decodeOrReject(deps, call.body, webhook.name, { webhook: webhook.name });
  if ('statusCode' in decoded) return decoded;
  const budgetMs = answerBudgetMs(callerTimeoutMs(call.timeout, webhook.timeoutSeconds));
  const run = runReview(webhook, decoded.request, budgetMs, deps.stop, namespaceObjectFrom(deps.namespaces, decoded.request));
  if (!(run instanceof Promise)) return finishReview(deps, webhook.name, decoded, run, started);
  deps.metrics.inFlight.inc();
  return run.then(
    (settled) => {
      deps.metrics.inFlight.dec();
      return finishReview(deps, webhook.name, decoded, settled, started);
    },
    (error: unknown) => {
      deps.metrics.inFlight.dec();
      throw error;
    },
  );
}
