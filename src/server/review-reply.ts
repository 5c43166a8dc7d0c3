/** What every webhook route shares: its inputs and reply, decoding, and the review's log line. */
import type { Logger } from 'pino';
import type { NamespaceSource } from '../admission/namespace-object.js';
import type { WebhookRegistry } from '../webhooks/registry.js';
import type { AdmissionRequest, Webhook, WebhookType } from '../admission/types.js';
import type { GroupRun } from './group-verdict.js';
import type { AdmissionMetrics } from './metrics.js';
import { decodeReview, InvalidReviewError, type DecodedReview } from './review-decode.js';
import type { HandlerServices, ReviewRun } from './run-review.js';

/** What the HTTP layer sends back for one POST to a webhook path. */
export interface RouteReply {
  statusCode: number;
  /** Serialised JSON. */
  body: string;
  /** How the handler's run ended, when one ran (the handler test helpers report it; HTTP ignores it). */
  run?: ReviewRun;
  /** Extra response headers (Retry-After). */
  headers?: Record<string, string>;
  /** End the connection after this answer, so the caller's next attempt opens a new one. */
  closeConnection?: boolean;
}

/**
 * How to answer a call that names entries this replica does not know (a grouped webhook's path
 * lists its members). The lifecycle decides from the live configurations (lifecycle/skew-judge.ts).
 */
export interface UnknownEntries {
  /**
   * `unserved`: the entries were removed (this replica's policy is the newer one): answer for the
   * others, with a warning for these. `retry`: they may be newer than this replica's policy and
   * enforcing: answer 503 so kube-apiserver sends the call again, on a new connection.
   */
  decide(type: WebhookType, names: readonly string[], path: string): 'unserved' | 'retry';
  /**
   * The entry this replica runs that answers for `name` as the rule it named (a rename: the live
   * configurations record both with one definition); undefined when there is none.
   */
  sameEntry?(type: WebhookType, name: string): Webhook | undefined;
}

/** The entry that answers for `name`: this replica's own, or the one defined alike (UnknownEntries.sameEntry). */
export function answeringEntry(deps: ReviewRouteDeps, type: WebhookType, name: string): Webhook | undefined {
  return deps.registry.lookup(type, name) ?? deps.unknownEntries?.sameEntry?.(type, name);
}

export interface ReviewRouteDeps {
  registry: WebhookRegistry;
  logger: Logger;
  metrics: AdmissionMetrics;
  /** Aborts when the server gives up on in-flight work (close deadline): pending reviews end at once. */
  stop?: AbortSignal;
  /** Calls naming entries this replica does not know: without it, they are answered as not served. */
  unknownEntries?: UnknownEntries;
  /** Where context.namespaceObject comes from; without it, a namespaced request's is unknown (undefined). */
  namespaces?: NamespaceSource;
  /** The logger (a child per review) and metrics handlers get; without them, offline ones. */
  handlerServices?: HandlerServices;
}

export interface ReviewCall {
  type: WebhookType;
  name: string;
  /** A grouped webhook's path: what follows its name, the members (`a.b.c`). */
  members?: string;
  /** The raw `?timeout=` value, if any. */
  timeout: string | undefined;
  /** Parsed JSON body. */
  body: unknown;
}

export function errorBody(message: string): string {
  return JSON.stringify({ error: message });
}

export function objectName(request: AdmissionRequest): string | undefined {
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

/** A group's line also says what each member that concerned the request decided, and which one denied. */
function groupFields(run: GroupRun): Record<string, unknown> {
  const entries = run.members.flatMap((member) =>
    member.run ? [{ entry: member.name, decision: member.run.verdict.decision, ms: Math.round(member.ms * 1000) / 1000, ...(member.round ? { round: member.round } : {}) }] : [],
  );
  return { entries, ...(run.decidedBy ? { decidedBy: run.decidedBy } : {}) };
}

export function logReview(logger: Logger, webhook: string, request: AdmissionRequest, run: ReviewRun | GroupRun, ms: number): void {
  const level = reviewLogLevel(run);
  // The line is not even built when its level is off: at the default level that is most reviews.
  if (!logger.isLevelEnabled(level)) return;
  const { verdict } = run;
  const line = {
    uid: request.uid,
    kind: request.kind.kind,
    namespace: request.namespace,
    object: objectName(request),
    operation: request.operation,
    webhook,
    decision: verdict.decision,
    allowed: verdict.allowed,
    dryRun: request.dryRun,
    patched: verdict.patch !== undefined,
    ms: Math.round(ms * 1000) / 1000,
    ...('members' in run ? groupFields(run) : {}),
  };
  if (level === 'warn') logger.warn({ ...line, failure: run.failure }, 'admission review answered by failurePolicy');
  else logger[level](line, 'admission review');
}

export function logDroppedAnnotations(logger: Logger, webhook: string, request: AdmissionRequest, run: ReviewRun): void {
  if (run.droppedAnnotations.length === 0) return;
  logger.warn(
    { uid: request.uid, webhook, keys: run.droppedAnnotations },
    'dropped audit annotations that kube-apiserver would refuse (key must be a qualified-name part, value a string)',
  );
}

/** The review in `body`, or the 400 that says what is wrong with it (logged and counted under `webhookLabel`). */
export function decodeOrReject(deps: ReviewRouteDeps, body: unknown, webhookLabel: string, logFields: Record<string, unknown>): DecodedReview | RouteReply {
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
export const UNSERVED_LABEL = '_unserved';

/** Runs `settle` when `run` settles, with the in-flight gauge up meanwhile; synchronous runs never touch it. */
export function settled<R, T>(deps: ReviewRouteDeps, run: R | Promise<R>, settle: (result: R) => T): T | Promise<T> {
  if (!(run instanceof Promise)) return settle(run);
  deps.metrics.inFlight.inc();
  return run.then(
    (result) => {
      deps.metrics.inFlight.dec();
      return settle(result);
    },
    (error: unknown) => {
      deps.metrics.inFlight.dec();
      throw error;
    },
  );
}

/**
 * The 503 that makes kube-apiserver send the call again at once (Retry-After: 0), on a new
 * connection (Connection: close), which the Service most likely routes to another replica; the
 * Status body is what the user reads if no replica can answer before the deadline.
 */
export function retryElsewhere(deps: ReviewRouteDeps, call: ReviewCall, decoded: DecodedReview, unknown: readonly string[], label: string): RouteReply {
  const { request } = decoded;
  deps.metrics.webhook(label).countRequest(request.operation, 'retry');
  // Replicas disagree here as much as when a call is allowed as not served: the same counter.
  for (const name of unknown) deps.metrics.unknownWebhook.inc({ type: call.type, webhook: deps.metrics.unknownWebhookLabels.label(call.type, name) });
  const message = `this replica does not run ${unknown.map((name) => `"${name}"`).join(', ')} of ${call.type} webhook "${call.name}" and its policy may be older than the registered one; retry on another replica`;
  deps.logger.warn(
    { uid: request.uid, type: call.type, webhook: call.name, entries: unknown, kind: request.kind.kind, namespace: request.namespace, object: objectName(request), operation: request.operation },
    'review names entries this replica does not run and may be newer: answered 503 so kube-apiserver retries',
  );
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'ServiceUnavailable', code: 503 };
  return { statusCode: 503, body: JSON.stringify(status), headers: { 'retry-after': '0' }, closeConnection: true };
}
