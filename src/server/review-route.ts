import { namespaceObjectFrom } from '../admission/namespace-object.js';
import { webhookPath } from '../webhooks/group-path.js';
import { answerBudgetMs, callerTimeoutMs } from './deadline.js';
import { answerGroup } from './group-route.js';
import type { DecodedReview } from './review-decode.js';
import { encodeReview } from './review-encode.js';
import {
  answeringEntry,
  decodeOrReject,
  errorBody,
  logDroppedAnnotations,
  logReview,
  objectName,
  retryElsewhere,
  settled,
  UNSERVED_LABEL,
  type ReviewCall,
  type ReviewRouteDeps,
  type RouteReply,
} from './review-reply.js';
import { runReview, type ReviewRun } from './run-review.js';
import { isServableWebhookName, unservedVerdict } from './unserved-webhook.js';

export { errorBody, type ReviewCall, type ReviewRouteDeps, type RouteReply, type UnknownEntries } from './review-reply.js';

/**
 * A name this replica does not serve: a well-formed review is allowed with a warning (replicas on
 * different policy versions must not fail kube-apiserver's calls), logged and counted, unless
 * the lifecycle judges that the entry may be newer than this replica's policy (then a 503 asks
 * kube-apiserver to retry, most likely on another replica); a body that is no review is still a
 * 400, and a name no version could serve a 404.
 */
function answerUnserved(deps: ReviewRouteDeps, call: ReviewCall): RouteReply {
  if (!isServableWebhookName(call.name)) {
    deps.logger.warn({ type: call.type, webhook: call.name }, 'review for a path that is no webhook name');
    deps.metrics.webhook(UNSERVED_LABEL).countRequest('', 'invalid');
    return { statusCode: 404, body: errorBody(`no ${call.type} webhook "${call.name}": webhook names are DNS-1123 labels (lowercase letters, digits and "-")`) };
  }
  const decoded = decodeOrReject(deps, call.body, UNSERVED_LABEL, { type: call.type, webhook: call.name });
  if ('statusCode' in decoded) return decoded;
  if (deps.unknownEntries?.decide(call.type, [call.name], webhookPath({ type: call.type, name: call.name })) === 'retry') {
    return retryElsewhere(deps, call, decoded, [call.name], deps.metrics.unknownWebhookLabels.label(call.type, call.name));
  }
  const { request } = decoded;
  deps.metrics.unknownWebhook.inc({ type: call.type, webhook: deps.metrics.unknownWebhookLabels.label(call.type, call.name) });
  deps.logger.warn(
    { uid: request.uid, type: call.type, webhook: call.name, kind: request.kind.kind, namespace: request.namespace, object: objectName(request), operation: request.operation },
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
  return { statusCode: 200, body, run };
}

/**
 * Answers one review: resolves the webhook at request time (the registry may have been replaced),
 * decodes, runs the handler within the caller's deadline and encodes the verdict. Synchronous
 * when the handler is: the in-flight gauge then never sees the review (no scrape can fall
 * between its start and its end), so only asynchronous handlers move it. A grouped webhook's
 * path (its members after its name) is answered by answerGroup.
 */
export function answerReview(deps: ReviewRouteDeps, call: ReviewCall): RouteReply | Promise<RouteReply> {
  if (call.members !== undefined) return answerGroup(deps, call);
  const started = performance.now();
  const webhook = answeringEntry(deps, call.type, call.name);
  if (!webhook) return answerUnserved(deps, call);
  const decoded = decodeOrReject(deps, call.body, webhook.name, { webhook: webhook.name });
  if ('statusCode' in decoded) return decoded;
  const budgetMs = answerBudgetMs(callerTimeoutMs(call.timeout, webhook.timeoutSeconds));
  const run = runReview(webhook, decoded.request, budgetMs, deps.stop, namespaceObjectFrom(deps.namespaces, decoded.request), deps.handlerServices);
  return settled(deps, run, (settledRun) => finishReview(deps, webhook.name, decoded, settledRun, started));
}
