/**
 * A call to a grouped webhook's path, `/validate/<group>/<a>.<b>.<c>`: the path names the members
 * the caller's configuration expects, and this replica runs the ones it knows (its own version of
 * each). A member it does not know is one that a newer policy added (this replica is behind) or
 * an older one had (this replica is ahead); in a group registered failurePolicy Ignore it is
 * answered as not served, with a warning. In a Fail group it may be an enforcing rule: the
 * lifecycle judges (UnknownEntries), and when it cannot rule out that the entry is newer the
 * answer is a 503 with Retry-After: 0 and Connection: close, which kube-apiserver's client
 * retries at once on a new connection (so, through the Service, most likely another replica).
 */
import { parseGroupName } from '../webhooks/group-key.js';
import { namespaceObjectFrom } from '../admission/namespace-object.js';
import { parseMembersPath } from '../webhooks/group-path.js';
import { webhookPath } from '../webhooks/group-path.js';
import type { Webhook } from '../admission/types.js';
import { answerBudgetMs, callerTimeoutMs } from './deadline.js';
import type { GroupRun } from './group-verdict.js';
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
import { runGroup, type GroupCall } from './run-group.js';

/** kube-apiserver's webhook timeout when nothing else says one (its default timeoutSeconds). */
const DEFAULT_TIMEOUT_SECONDS = 10;

/**
 * The metric label of a group's calls: its name when this replica registers such a group; other
 * names come from the URL (anyone who reaches the port can invent them), so they are capped.
 */
function groupLabel(deps: ReviewRouteDeps, call: ReviewCall): string {
  const registered = deps.registry.groups().some((group) => group.type === call.type && group.name === call.name);
  return registered ? call.name : deps.metrics.groupLabels.label(call.type, call.name);
}

/** Encodes, counts (each member that ran under its own name, the call's time under the group's) and logs. */
function finishGroup(deps: ReviewRouteDeps, call: GroupCall, label: string, decoded: DecodedReview, run: GroupRun, started: number): RouteReply {
  const { request } = decoded;
  const body = encodeReview(decoded.apiVersion, request.uid, run.verdict);
  const ms = performance.now() - started;
  for (const member of run.members) if (member.run) deps.metrics.webhook(member.name).countRequest(request.operation, member.run.verdict.decision);
  deps.metrics.webhook(label).observeDuration(ms / 1000);
  logReview(deps.logger, call.name, request, run, ms);
  logDroppedAnnotations(deps.logger, call.name, request, run);
  return { statusCode: 200, body };
}

/** Counts and logs the members answered as not served. */
function noteUnserved(deps: ReviewRouteDeps, call: ReviewCall, decoded: DecodedReview, unknown: readonly string[]): void {
  for (const name of unknown) deps.metrics.unknownWebhook.inc({ type: call.type, webhook: deps.metrics.unknownWebhookLabels.label(call.type, name) });
  const { request } = decoded;
  deps.logger.warn(
    { uid: request.uid, type: call.type, webhook: call.name, entries: unknown, kind: request.kind.kind, namespace: request.namespace, object: objectName(request), operation: request.operation },
    'review names entries this replica does not serve (yet or any more): the others answer, with a warning for these',
  );
}

/** Answers a call to a group's path; see the module comment. */
export function answerGroup(deps: ReviewRouteDeps, call: ReviewCall): RouteReply | Promise<RouteReply> {
  const started = performance.now();
  const names = parseGroupName(call.name) ? parseMembersPath(call.members ?? '') : undefined;
  if (!names) {
    const path = `${webhookPath({ type: call.type, name: call.name })}/${call.members ?? ''}`;
    deps.logger.warn({ type: call.type, webhook: call.name, members: call.members }, 'review for a path that is no webhook path');
    deps.metrics.webhook(UNSERVED_LABEL).countRequest('', 'invalid');
    return { statusCode: 404, body: errorBody(`no route for POST ${path}: use POST /validate/<name> or /mutate/<name>, or a group's /validate/<group>/<member>.<member>...`) };
  }
  const label = groupLabel(deps, call);
  const decoded = decodeOrReject(deps, call.body, label, { webhook: call.name });
  if ('statusCode' in decoded) return decoded;
  const registered = deps.registry.group(`${webhookPath({ type: call.type, name: call.name })}/${call.members}`);
  const members: Webhook[] = [];
  const unknown: string[] = [];
  for (const name of names) {
    const member = answeringEntry(deps, call.type, name);
    // A renamed entry and its new name in one path are one rule: it runs once.
    if (member && !members.includes(member)) members.push(member);
    else if (!member) unknown.push(name);
  }
  const facts = parseGroupName(call.name);
  if (unknown.length > 0) {
    const path = `${webhookPath({ type: call.type, name: call.name })}/${call.members}`;
    const answer = facts?.failurePolicy === 'Ignore' ? 'unserved' : (deps.unknownEntries?.decide(call.type, unknown, path) ?? 'unserved');
    if (answer === 'retry') return retryElsewhere(deps, call, decoded, unknown, label);
    noteUnserved(deps, call, decoded, unknown);
  }
  const timeoutSeconds = registered?.timeoutSeconds ?? (members.length > 0 ? Math.max(...members.map((m) => m.timeoutSeconds)) : DEFAULT_TIMEOUT_SECONDS);
  const budgetMs = answerBudgetMs(callerTimeoutMs(call.timeout, timeoutSeconds));
  const group: GroupCall = {
    name: call.name,
    type: call.type,
    members,
    unserved: unknown,
    ...(registered ? { shared: registered.shared } : {}),
    reinvoked: (registered?.reinvocationPolicy ?? facts?.reinvocationPolicy) === 'IfNeeded',
    namespaceObject: namespaceObjectFrom(deps.namespaces, decoded.request),
    ...(deps.handlerServices ? { services: deps.handlerServices } : {}),
  };
  return settled(deps, runGroup(group, decoded.request, budgetMs, deps.stop), (run) => finishGroup(deps, group, label, decoded, run, started));
}
