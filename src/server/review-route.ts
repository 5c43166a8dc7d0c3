import type { Logger } from 'pino';
import type { WebhookRegistry } from '../policy/registry.js';
import type { AdmissionRequest, WebhookType } from '../policy/types.js';
import { answerBudgetMs, callerTimeoutMs } from './deadline.js';
import type { AdmissionMetrics } from './metrics.js';
import { decodeReview, InvalidReviewError } from './review-decode.js';
import { encodeReview } from './review-encode.js';
import { runReview, type ReviewRun } from './run-review.js';

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

function logReview(logger: Logger, webhook: string, request: AdmissionRequest, run: ReviewRun, ms: number): void {
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
  if (run.failure !== undefined) logger.warn({ ...line, failure: run.failure }, 'admission review answered by failurePolicy');
  else logger.info(line, 'admission review');
  if (run.droppedAnnotations.length > 0) {
    logger.warn(
      { uid: request.uid, webhook, keys: run.droppedAnnotations },
      'dropped audit annotations that kube-apiserver would refuse (key must be a qualified-name part, value a string)',
    );
  }
}

/**
 * Answers one review: resolves the webhook at request time (the registry may have been replaced),
 * decodes, runs the handler within the caller's deadline and encodes the verdict.
 */
export async function answerReview(deps: ReviewRouteDeps, call: ReviewCall): Promise<RouteReply> {
  const started = performance.now();
  const webhook = deps.registry.lookup(call.type, call.name);
  if (!webhook) {
    deps.logger.warn({ type: call.type, webhook: call.name }, 'review for an unknown webhook');
    deps.metrics.requests.inc({ webhook: 'unknown', operation: '', decision: 'invalid' });
    return { statusCode: 404, body: errorBody(`no ${call.type} webhook named "${call.name}" is served here`) };
  }
  let decoded;
  try {
    decoded = decodeReview(call.body);
  } catch (error) {
    if (!(error instanceof InvalidReviewError)) throw error;
    deps.logger.warn({ webhook: webhook.name, error: error.message }, 'invalid admission review');
    deps.metrics.requests.inc({ webhook: webhook.name, operation: '', decision: 'invalid' });
    return { statusCode: 400, body: errorBody(error.message) };
  }
  const { request } = decoded;
  deps.metrics.inFlight.inc();
  try {
    const budgetMs = answerBudgetMs(callerTimeoutMs(call.timeout, webhook.timeoutSeconds));
    const run = await runReview(webhook, request, budgetMs, deps.stop);
    const body = encodeReview(decoded.apiVersion, request.uid, run.verdict);
    const ms = performance.now() - started;
    deps.metrics.requests.inc({ webhook: webhook.name, operation: request.operation, decision: run.verdict.decision });
    deps.metrics.duration.observe({ webhook: webhook.name }, ms / 1000);
    logReview(deps.logger, webhook.name, request, run, ms);
    return { statusCode: 200, body };
  } finally {
    deps.metrics.inFlight.dec();
  }
}
