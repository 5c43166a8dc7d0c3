/**
 * One admission review, from the parsed body to the answer, top to bottom: the entries the path
 * names (one entry, a group's members, or names this replica does not serve), the review decoded
 * and verified, the caller's deadline, the handlers run (run-handler.ts, run-group.ts: each with
 * its failurePolicy), the AdmissionReview encoded, counted and logged.
 */
import type { Logger } from 'pino';
import type { AdmissionRequest, KubeObject, Operation, Webhook, WebhookType } from '../../admission/types.js';
import { namespaceObjectName, type NamespaceSource } from '../../admission/namespace-object.js';
import { isDns1123Label } from '../../admission/kube-names.js';
import { parseDuration } from '../../config/duration.js';
import { parseGroupName } from '../../webhooks/group-key.js';
import { parseMembersPath } from '../../webhooks/group-path.js';
import type { WebhookRegistry } from '../../webhooks/registry.js';
import type { AdmissionMetrics } from './metrics.js';
import { runGroup, unservedWarning, type GroupCall, type GroupRun } from './run-group.js';
import { runReview, type HandlerServices, type ReviewRun, type Verdict } from './run-handler.js';

/** A POST to a webhook path, as the HTTP layer hands it over. */
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

/** What the HTTP layer sends back. */
export interface ReviewAnswer {
  statusCode: number;
  /** Serialised JSON. */
  body: string;
  /** How the handler's run ended, when one entry ran (the handler test helpers report it; HTTP ignores it). */
  run?: ReviewRun;
  /** Extra response headers (Retry-After). */
  headers?: Record<string, string>;
  /** End the connection after this answer, so the caller's next attempt opens a new one. */
  closeConnection?: boolean;
}

/**
 * How to answer a call that names entries this replica does not know. The lifecycle decides from
 * the live configurations (lifecycle/skew-judge.ts).
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

export interface ReviewDeps {
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

/**
 * Answers one review. Synchronous when the handlers are: the in-flight gauge then never sees the
 * review (no scrape can fall between its start and its end), so only asynchronous handlers move
 * it. The registry is read at request time: a new policy version takes effect at once.
 */
export function answerReview(deps: ReviewDeps, call: ReviewCall): ReviewAnswer | Promise<ReviewAnswer> {
  const started = performance.now();
  const target = resolveTarget(deps, call);
  if ('statusCode' in target) return target;
  const decoded = decodeOrReject(deps, call.body, target.label, { type: call.type, webhook: call.name });
  if ('statusCode' in decoded) return decoded;
  if (target.unknown.length > 0) {
    const answer = target.members === undefined || target.failurePolicy !== 'Ignore' ? deps.unknownEntries?.decide(call.type, target.unknown, target.path) : 'unserved';
    if (answer === 'retry') return retryElsewhere(deps, call, decoded, target);
    noteUnserved(deps, call, decoded, target);
    if (target.entry === undefined && target.members === undefined) return answerUnserved(decoded, call.name);
  }
  const budgetMs = answerBudgetMs(callerTimeoutMs(call.timeout, target.timeoutSeconds));
  const namespaceObject = namespaceObjectLookup(deps.namespaces, decoded.request);
  if (target.entry) {
    const run = runReview(target.entry, decoded.request, budgetMs, deps.stop, namespaceObject, deps.handlerServices);
    return settled(deps, run, (done) => finish(deps, call, target, decoded, done, started));
  }
  const group: GroupCall = { ...target.group!, namespaceObject, ...(deps.handlerServices ? { services: deps.handlerServices } : {}) };
  return settled(deps, runGroup(group, decoded.request, budgetMs, deps.stop), (done) => finish(deps, call, target, decoded, done, started));
}

// ---- The entries a path names ----------------------------------------------------------------

/** What a call's path resolves to on this replica. */
interface Target {
  /** The path as called, for the unknown-entries judge and messages. */
  path: string;
  /** The metric label of the call: the entry's name, the group's, or a label standing for either. */
  label: string;
  /** A single entry's path this replica serves. */
  entry?: Webhook;
  /** A group's path: the members this replica knows and what the registration decided for them. */
  group?: Omit<GroupCall, 'namespaceObject' | 'services'>;
  members?: readonly Webhook[];
  /** Names the path routes to that this replica does not serve. */
  unknown: readonly string[];
  /** The group's failurePolicy, read from its name (a group registered Ignore never retries). */
  failurePolicy?: 'Fail' | 'Ignore';
  timeoutSeconds: number;
}

/** The entry that answers for `name`: this replica's own, or the one defined alike (UnknownEntries.sameEntry). */
function answeringEntry(deps: ReviewDeps, type: WebhookType, name: string): Webhook | undefined {
  return deps.registry.lookup(type, name) ?? deps.unknownEntries?.sameEntry?.(type, name);
}

/** kube-apiserver's webhook timeout when nothing else says one (its default timeoutSeconds). */
const DEFAULT_TIMEOUT_SECONDS = 10;

/** The label of invalid requests to a webhook this replica does not serve (not a valid webhook name). */
export const UNSERVED_LABEL = '_unserved';

function resolveTarget(deps: ReviewDeps, call: ReviewCall): Target | ReviewAnswer {
  const path = `/${call.type === 'mutating' ? 'mutate' : 'validate'}/${call.name}`;
  if (call.members !== undefined) return resolveGroup(deps, call, `${path}/${call.members}`);
  const entry = answeringEntry(deps, call.type, call.name);
  if (entry) return { path, label: entry.name, entry, unknown: [], timeoutSeconds: entry.timeoutSeconds };
  if (!isDns1123Label(call.name)) {
    deps.logger.warn({ type: call.type, webhook: call.name }, 'review for a path that is no webhook name');
    deps.metrics.webhook(UNSERVED_LABEL).countRequest('', 'invalid');
    return { statusCode: 404, body: errorBody(`no ${call.type} webhook "${call.name}": webhook names are DNS-1123 labels (lowercase letters, digits and "-")`) };
  }
  return { path, label: UNSERVED_LABEL, unknown: [call.name], timeoutSeconds: DEFAULT_TIMEOUT_SECONDS };
}

/**
 * A grouped webhook's path names the members the caller's configuration expects: this replica
 * runs the ones it knows (its own version of each). One it does not know is one a newer policy
 * added (this replica is behind) or an older one had (it is ahead): in a group registered
 * failurePolicy Ignore it is answered as not served, with a warning; in a Fail group the
 * lifecycle judges (UnknownEntries), and when it cannot rule out that the entry is newer the
 * answer is a 503 that kube-apiserver retries at once on a new connection.
 */
function resolveGroup(deps: ReviewDeps, call: ReviewCall, path: string): Target | ReviewAnswer {
  // The path of a group this replica registers names exactly its members: nothing to parse.
  const registered = deps.registry.group(path);
  if (registered) {
    const reinvoked = registered.reinvocationPolicy === 'IfNeeded';
    const group = { name: call.name, type: call.type, members: registered.members, unserved: [], reinvoked, shared: registered.shared };
    return { path, label: call.name, group, members: registered.members, unknown: [], timeoutSeconds: registered.timeoutSeconds };
  }
  const facts = parseGroupName(call.name);
  const names = facts ? parseMembersPath(call.members ?? '') : undefined;
  if (!facts || !names) {
    deps.logger.warn({ type: call.type, webhook: call.name, members: call.members }, 'review for a path that is no webhook path');
    deps.metrics.webhook(UNSERVED_LABEL).countRequest('', 'invalid');
    return { statusCode: 404, body: errorBody(`no route for POST ${path}: use POST /validate/<name> or /mutate/<name>, or a group's /validate/<group>/<member>.<member>...`) };
  }
  const members: Webhook[] = [];
  const unknown: string[] = [];
  for (const name of names) {
    const member = answeringEntry(deps, call.type, name);
    // A renamed entry and its new name in one path are one rule: it runs once.
    if (member && !members.includes(member)) members.push(member);
    else if (!member) unknown.push(name);
  }
  // Names that no group of this replica has come from the URL (anyone who reaches the port can invent them): capped.
  const known = deps.registry.groups().some((group) => group.type === call.type && group.name === call.name);
  const label = known ? call.name : deps.metrics.groupLabels.label(call.type, call.name);
  const timeoutSeconds = members.length > 0 ? Math.max(...members.map((m) => m.timeoutSeconds)) : DEFAULT_TIMEOUT_SECONDS;
  const group = { name: call.name, type: call.type, members, unserved: unknown, reinvoked: facts.reinvocationPolicy === 'IfNeeded' };
  return { path, label, group, members, unknown, failurePolicy: facts.failurePolicy, timeoutSeconds };
}

// ---- The review: decoded and verified --------------------------------------------------------

export const ADMISSION_V1 = 'admission.k8s.io/v1';
export const ADMISSION_V1BETA1 = 'admission.k8s.io/v1beta1';
export type ReviewApiVersion = typeof ADMISSION_V1 | typeof ADMISSION_V1BETA1;

export interface DecodedReview {
  apiVersion: ReviewApiVersion;
  request: AdmissionRequest;
}

/** A body that is not a usable AdmissionReview: answered 400 with `message`. */
export class InvalidReviewError extends Error {
  override readonly name = 'InvalidReviewError';
  readonly statusCode = 400;
}

const OPERATIONS: ReadonlySet<string> = new Set<Operation>(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string): never {
  throw new InvalidReviewError(message);
}

function objectOrNull(value: unknown, field: string): KubeObject | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) invalid(`request.${field} must be an object or null`);
  return value as KubeObject;
}

function checkApiVersion(body: Record<string, unknown>): ReviewApiVersion {
  const { apiVersion, kind } = body;
  if (apiVersion !== ADMISSION_V1 && apiVersion !== ADMISSION_V1BETA1) {
    invalid(`unsupported apiVersion ${JSON.stringify(apiVersion ?? null)}: expected "${ADMISSION_V1}" or "${ADMISSION_V1BETA1}"`);
  }
  if (kind !== 'AdmissionReview') invalid(`kind must be "AdmissionReview", got ${JSON.stringify(kind ?? null)}`);
  return apiVersion;
}

function checkRequest(raw: unknown): AdmissionRequest {
  if (raw === undefined || raw === null) invalid('AdmissionReview has no request');
  if (!isRecord(raw)) invalid('request must be an object');
  if (typeof raw.uid !== 'string' || raw.uid === '') invalid('request.uid is missing or empty');
  if (typeof raw.operation !== 'string' || !OPERATIONS.has(raw.operation)) {
    invalid(`request.operation must be one of CREATE, UPDATE, DELETE, CONNECT, got ${JSON.stringify(raw.operation ?? null)}`);
  }
  if (!isRecord(raw.kind) || typeof raw.kind.kind !== 'string') invalid('request.kind must be a {group, version, kind} object');
  if (raw.dryRun !== undefined && typeof raw.dryRun !== 'boolean') invalid('request.dryRun must be a boolean');
  // The request object is used as it came, with the nullable fields normalised (no copy on the hot path).
  raw.object = objectOrNull(raw.object, 'object');
  raw.oldObject = objectOrNull(raw.oldObject, 'oldObject');
  raw.dryRun = raw.dryRun === true;
  if (!isRecord(raw.userInfo)) raw.userInfo = {};
  return raw as unknown as AdmissionRequest;
}

/** Checks that `body` (parsed JSON) is an AdmissionReview kube-apiserver could have sent; throws InvalidReviewError saying what is wrong. */
export function decodeReview(body: unknown): DecodedReview {
  if (!isRecord(body)) invalid('body must be a JSON object (an AdmissionReview)');
  const apiVersion = checkApiVersion(body);
  return { apiVersion, request: checkRequest(body.request) };
}

/** The review in `body`, or the 400 that says what is wrong with it (logged and counted under `label`). */
function decodeOrReject(deps: ReviewDeps, body: unknown, label: string, logFields: Record<string, unknown>): DecodedReview | ReviewAnswer {
  try {
    return decodeReview(body);
  } catch (error) {
    if (!(error instanceof InvalidReviewError)) throw error;
    deps.logger.warn({ ...logFields, error: error.message }, 'invalid admission review');
    deps.metrics.webhook(label).countRequest('', 'invalid');
    return { statusCode: 400, body: errorBody(error.message) };
  }
}

/**
 * How a handler's context finds the request's namespaceObject when it reads it (once per review):
 * null when the request has none, undefined when `source` does not know the namespace.
 */
function namespaceObjectLookup(source: NamespaceSource | undefined, request: AdmissionRequest): () => KubeObject | null | undefined {
  let looked = false;
  let found: KubeObject | null | undefined;
  return () => {
    if (!looked) {
      const name = namespaceObjectName(request);
      found = name === undefined ? null : source?.get(name);
      looked = true;
    }
    return found;
  };
}

// ---- The caller's deadline -------------------------------------------------------------------

/** kube-apiserver sends a handful of distinct values (`10s`, `5s`...): parse each once. */
const parsedTimeouts = new Map<string, number | undefined>();
const MAX_CACHED_TIMEOUTS = 64;

/** Never wait longer than the largest timeoutSeconds kube-apiserver allows, whatever the query says. */
const MAX_TIMEOUT_MS = 30_000;

function parseTimeoutMs(text: string): number | undefined {
  if (parsedTimeouts.has(text)) return parsedTimeouts.get(text);
  const parsed = parseDuration(text);
  if (parsedTimeouts.size < MAX_CACHED_TIMEOUTS) parsedTimeouts.set(text, parsed);
  return parsed;
}

/**
 * How long the server may spend before it must answer: the caller's timeout minus a safety margin
 * for the response to travel back (10% of the timeout, at least 100 ms, at most 1 s, never more
 * than half the timeout). Past this point the answer is decided by failurePolicy.
 */
export function answerBudgetMs(timeoutMs: number): number {
  const margin = Math.min(Math.max(timeoutMs * 0.1, 100), 1000, timeoutMs / 2);
  return Math.max(0, Math.floor(timeoutMs - margin));
}

/**
 * The caller's timeout in milliseconds: `?timeout=` when it is a valid Go duration (kube-apiserver
 * always sends one), else the webhook's own timeoutSeconds.
 */
export function callerTimeoutMs(query: string | undefined, webhookTimeoutSeconds: number): number {
  const fromQuery = query === undefined ? undefined : parseTimeoutMs(query);
  const timeoutMs = fromQuery !== undefined && fromQuery > 0 ? fromQuery : webhookTimeoutSeconds * 1000;
  return Math.min(timeoutMs, MAX_TIMEOUT_MS);
}

/** Runs `settle` when `run` settles, with the in-flight gauge up meanwhile; synchronous runs never touch it. */
function settled<R, T>(deps: ReviewDeps, run: R | Promise<R>, settle: (result: R) => T): T | Promise<T> {
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

// ---- Names this replica does not serve -------------------------------------------------------

/**
 * During a policy change replicas disagree for a minute or two (each pod's ConfigMap volume is
 * updated on its own schedule; a rolling update mixes versions), so kube-apiserver calls paths
 * some replicas do not know. A 404 would be a failed call, and under failurePolicy Fail a
 * rejected user request: the review is allowed with a warning instead, logged and counted.
 */
function answerUnserved(decoded: DecodedReview, name: string): ReviewAnswer {
  const verdict: Verdict = { decision: 'allowed', allowed: true, warnings: [unservedWarning(name)] };
  return { statusCode: 200, body: encodeReview(decoded.apiVersion, decoded.request.uid, verdict) };
}

function noteUnserved(deps: ReviewDeps, call: ReviewCall, decoded: DecodedReview, target: Target): void {
  for (const name of target.unknown) deps.metrics.unknownWebhook.inc({ type: call.type, webhook: deps.metrics.unknownWebhookLabels.label(call.type, name) });
  const { request } = decoded;
  const fields = { uid: request.uid, type: call.type, webhook: call.name, kind: request.kind.kind, namespace: request.namespace, object: objectName(request), operation: request.operation };
  if (target.members === undefined) deps.logger.warn(fields, 'review for a webhook this replica does not serve (yet or any more): allowed with a warning');
  else deps.logger.warn({ ...fields, entries: target.unknown }, 'review names entries this replica does not serve (yet or any more): the others answer, with a warning for these');
}

/**
 * The 503 that makes kube-apiserver send the call again at once (Retry-After: 0), on a new
 * connection (Connection: close), which the Service most likely routes to another replica; the
 * Status body is what the user reads if no replica can answer before the deadline.
 */
function retryElsewhere(deps: ReviewDeps, call: ReviewCall, decoded: DecodedReview, target: Target): ReviewAnswer {
  const { request } = decoded;
  const label = target.members === undefined ? deps.metrics.unknownWebhookLabels.label(call.type, call.name) : target.label;
  deps.metrics.webhook(label).countRequest(request.operation, 'retry');
  // Replicas disagree here as much as when a call is allowed as not served: the same counter.
  for (const name of target.unknown) deps.metrics.unknownWebhook.inc({ type: call.type, webhook: deps.metrics.unknownWebhookLabels.label(call.type, name) });
  const names = target.unknown.map((name) => `"${name}"`).join(', ');
  const message = `this replica does not run ${names} of ${call.type} webhook "${call.name}" and its policy may be older than the registered one; retry on another replica`;
  deps.logger.warn(
    { uid: request.uid, type: call.type, webhook: call.name, entries: target.unknown, kind: request.kind.kind, namespace: request.namespace, object: objectName(request), operation: request.operation },
    'review names entries this replica does not run and may be newer: answered 503 so kube-apiserver retries',
  );
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'ServiceUnavailable', code: 503 };
  return { statusCode: 503, body: JSON.stringify(status), headers: { 'retry-after': '0' }, closeConnection: true };
}

// ---- The answer: encoded, counted, logged ----------------------------------------------------

function finish(deps: ReviewDeps, call: ReviewCall, target: Target, decoded: DecodedReview, run: ReviewRun | GroupRun, started: number): ReviewAnswer {
  const { request } = decoded;
  const body = encodeReview(decoded.apiVersion, request.uid, run.verdict);
  const ms = performance.now() - started;
  if ('members' in run) {
    // Each member that ran counts under its own name; the call's time under the group's.
    for (const member of run.members) if (member.run) deps.metrics.webhook(member.name).countRequest(request.operation, member.run.verdict.decision);
    deps.metrics.webhook(target.label).observeDuration(ms / 1000);
  } else {
    const counts = deps.metrics.webhook(target.label);
    counts.countRequest(request.operation, run.verdict.decision);
    counts.observeDuration(ms / 1000);
  }
  logReview(deps.logger, call.name, request, run, ms);
  if (run.droppedAnnotations.length > 0) {
    deps.logger.warn(
      { uid: request.uid, webhook: call.name, keys: run.droppedAnnotations },
      'dropped audit annotations that kube-apiserver would refuse (key must be a qualified-name part, value a string)',
    );
  }
  return 'members' in run ? { statusCode: 200, body } : { statusCode: 200, body, run };
}

interface AdmissionResponseBody {
  uid: string;
  allowed: boolean;
  status?: Verdict['status'] & { status: 'Failure' };
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/**
 * UTF-8 then base64. A patch is nearly always ASCII (a string whose UTF-8 is as long as it is),
 * and btoa() encodes that without the Buffer that Buffer.from() takes from its pool per answer.
 */
function base64(text: string): string {
  return Buffer.byteLength(text) === text.length ? btoa(text) : Buffer.from(text).toString('base64');
}

/** The AdmissionReview JSON answering `uid`, in the caller's apiVersion (HTTP 200 whatever the verdict). */
export function encodeReview(apiVersion: ReviewApiVersion, uid: string, verdict: Verdict): string {
  const response: AdmissionResponseBody = { uid, allowed: verdict.allowed };
  if (!verdict.allowed && verdict.status) response.status = { ...verdict.status, status: 'Failure' };
  if (verdict.patch && verdict.patch.length > 0) {
    response.patch = base64(JSON.stringify(verdict.patch));
    response.patchType = 'JSONPatch';
  }
  if (verdict.warnings && verdict.warnings.length > 0) response.warnings = verdict.warnings;
  if (verdict.auditAnnotations && Object.keys(verdict.auditAnnotations).length > 0) response.auditAnnotations = verdict.auditAnnotations;
  return JSON.stringify({ apiVersion, kind: 'AdmissionReview', response });
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
  return !verdict.allowed || warned || audited ? 'info' : 'debug';
}

/** A group's line also says what each member that concerned the request decided, and which one denied. */
function groupFields(run: GroupRun): Record<string, unknown> {
  const entries = run.members.flatMap((member) =>
    member.run ? [{ entry: member.name, decision: member.run.verdict.decision, ms: Math.round(member.ms * 1000) / 1000, ...(member.round ? { round: member.round } : {}) }] : [],
  );
  return { entries, ...(run.decidedBy ? { decidedBy: run.decidedBy } : {}) };
}

function logReview(logger: Logger, webhook: string, request: AdmissionRequest, run: ReviewRun | GroupRun, ms: number): void {
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
