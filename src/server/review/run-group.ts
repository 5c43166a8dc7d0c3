/**
 * Runs a grouped webhook's call: each member that concerns the request (member-match.ts), with
 * its own handler, failurePolicy and time budget inside the call's, then one answer (below).
 * Validating members look at the same object and run side by side (as
 * kube-apiserver calls validating webhooks in parallel); mutating members run in entry order,
 * each on the object as the earlier ones patched it and matched against it, and with
 * reinvocationPolicy IfNeeded a member is run once more when a later one changed the object, as
 * kube-apiserver's round 1 would. Synchronous handlers (the common case) are answered without a
 * promise or a timer, as a single webhook is.
 */
import { createHash } from 'node:crypto';
import { applyPatchInPlace, copyObject, type PatchOperation } from '../../admission/patch.js';
import type { AdmissionRequest, KubeObject, Webhook, WebhookType } from '../../admission/types.js';
import type { SharedMatch } from '../../webhooks/grouping.js';
import { memberMatches } from '../../webhooks/member-match.js';
import { cleanWarnings, isValidAuditKey, runReview, type DenialStatus, type HandlerServices, type NamespaceObject, type ReviewDecision, type ReviewRun, type Verdict } from './run-handler.js';

/** What a call to a group's path asks for, resolved against what this replica serves. */
export interface GroupCall {
  /** The group's name from the path. */
  name: string;
  type: WebhookType;
  /** The members this replica knows, in the path's order. */
  members: readonly Webhook[];
  /** Members the path names that this replica does not know: answered as not served (a warning). */
  unserved: readonly string[];
  /** What the registration decided for every member already; unknown: the server decides all it can. */
  shared?: SharedMatch;
  /** reinvocationPolicy IfNeeded (the group's key): members are run again after later changes. */
  reinvoked: boolean;
  /** The request's Namespace as the server's cache has it, for the members' context.namespaceObject. */
  namespaceObject?: NamespaceObject;
  /** The logger and metrics the members' handlers get; without them, offline ones. */
  services?: HandlerServices;
}

/** kube-apiserver's answer to a matchCondition error under failurePolicy Fail: 403, not a failed call. */
function matchConditionError(message: string): ReviewRun {
  return { verdict: { decision: 'denied', allowed: false, status: { code: 403, reason: 'Forbidden', message } }, droppedAnnotations: [] };
}

/**
 * One member: skipped, or run within its own timeoutSeconds and what is left of the call's
 * budget. Matched on `request`; run on `own()` when given (a copy the handler may edit).
 */
function runMember(
  member: Webhook,
  request: AdmissionRequest,
  call: GroupCall,
  deadline: number,
  stop: AbortSignal | undefined,
  round?: number,
  own?: () => AdmissionRequest,
): MemberResult | Promise<MemberResult> {
  const started = performance.now();
  const match = memberMatches(member, request, call.shared);
  if (match.matched === false) return { name: member.name, skipped: match.why, ms: 0 };
  const tag = round === undefined ? {} : { round };
  if (match.matched === 'error') return { name: member.name, run: matchConditionError(match.message), ms: performance.now() - started, ...tag };
  const budgetMs = Math.max(0, Math.min(member.timeoutSeconds * 1000, Math.floor(deadline - started)));
  // With `own`, the handler gets a copy and `request.object` is the object as it arrived to it: no snapshot needed.
  const run = own
    ? runReview(member, own(), budgetMs, stop, call.namespaceObject, call.services, request.object)
    : runReview(member, request, budgetMs, stop, call.namespaceObject, call.services);
  const finish = (settled: ReviewRun): MemberResult => ({ name: member.name, run: settled, ms: performance.now() - started, ...tag });
  return run instanceof Promise ? run.then(finish) : finish(run);
}

function runValidating(call: GroupCall, request: AdmissionRequest, deadline: number, stop: AbortSignal | undefined): GroupRun | Promise<GroupRun> {
  const results = call.members.map((member) => runMember(member, request, call, deadline, stop));
  if (results.some((result) => result instanceof Promise)) return Promise.all(results).then((settled) => combineFindings(settled, call.unserved));
  return combineFindings(results as MemberResult[], call.unserved);
}

/**
 * Calls `step(i)` for i = from.. in order, handing each result to `take`, which says whether to
 * go on; synchronous as long as every step is.
 */
function inOrder<T>(from: number, count: number, step: (i: number) => T | Promise<T>, take: (result: T, i: number) => boolean): void | Promise<void> {
  for (let i = from; i < count; i++) {
    const result = step(i);
    if (result instanceof Promise) return result.then((settled) => (take(settled, i) ? inOrder(i + 1, count, step, take) : undefined));
    if (!take(result, i)) return undefined;
  }
  return undefined;
}

/** The mutating members' pass: the object they patch in turn, what each did, who to run again. */
class MutationPass {
  readonly results: MemberResult[] = [];
  object: KubeObject | null;
  /** Members run in round 0 with IfNeeded, by index; those before a later change go to round 1. */
  readonly #invoked: number[] = [];
  readonly reinvoke = new Set<number>();
  denied = false;

  constructor(
    readonly call: GroupCall,
    readonly request: AdmissionRequest,
  ) {
    this.object = request.object === null ? null : copyObject(request.object);
  }

  /** The request as the next member sees it: the object as the members before it left it. */
  current(): AdmissionRequest {
    return { ...this.request, object: this.object };
  }

  /** The same with a copy of the object, for a member that runs (its handler may edit it in place). */
  readonly own = (): AdmissionRequest => ({ ...this.request, object: this.object === null ? null : copyObject(this.object) });

  take(result: MemberResult, index: number, round: 0 | 1): boolean {
    this.results.push(result);
    const verdict = result.run?.verdict;
    if (verdict && !verdict.allowed) {
      this.denied = true;
      return false;
    }
    if (verdict?.patch && this.object !== null) {
      // Its values copied: the next member's patch edits this object, and must not edit the patch sent.
      applyPatchInPlace(this.object, verdict.patch);
      if (round === 0) for (const earlier of this.#invoked) this.reinvoke.add(earlier);
    }
    if (round === 0 && result.run && this.call.reinvoked) this.#invoked.push(index);
    return true;
  }
}

function runMutating(call: GroupCall, request: AdmissionRequest, deadline: number, stop: AbortSignal | undefined): GroupRun | Promise<GroupRun> {
  // A group of one that no round runs again needs no pass: the member runs as a single entry would.
  if (call.members.length === 1 && !call.reinvoked) {
    const result = runMember(call.members[0]!, request, call, deadline, stop);
    return result instanceof Promise ? result.then((settled) => combinePatches([settled], call.unserved)) : combinePatches([result], call.unserved);
  }
  const pass = new MutationPass(call, request);
  const finish = (): GroupRun => combinePatches(pass.results, call.unserved);
  const roundOne = (): GroupRun | Promise<GroupRun> => {
    const again = [...pass.reinvoke].sort((a, b) => a - b);
    if (pass.denied || again.length === 0) return finish();
    const ran = inOrder(
      0,
      again.length,
      (i) => runMember(call.members[again[i]!]!, pass.current(), call, deadline, stop, 1, pass.own),
      (result, i) => pass.take(result, again[i]!, 1),
    );
    return ran instanceof Promise ? ran.then(finish) : finish();
  };
  const ran = inOrder(
    0,
    call.members.length,
    (i) => runMember(call.members[i]!, pass.current(), call, deadline, stop, undefined, pass.own),
    (result, i) => pass.take(result, i, 0),
  );
  return ran instanceof Promise ? ran.then(roundOne) : roundOne();
}

/**
 * Answers a group's call on `request` within `budgetMs` (or sooner when `stop` aborts). Never
 * throws or rejects: a member that throws, answers nonsense or runs out of its time gets its own
 * failurePolicy's answer, and the others still run.
 */
export function runGroup(call: GroupCall, request: AdmissionRequest, budgetMs: number, stop?: AbortSignal): GroupRun | Promise<GroupRun> {
  const deadline = performance.now() + budgetMs;
  return call.type === 'mutating' ? runMutating(call, request, deadline, stop) : runValidating(call, request, deadline, stop);
}

// ---- One answer from the members' answers ----------------------------------------------------
//
// One answer for a grouped webhook's call, from its members' answers. What kube-apiserver would
// have made of the members registered one by one, said once: a validating group reports every
// finding (each denying member's message, named; every warning) with the first denial's code;
// a mutating group sends one JSON patch, the members' patches in entry order, or the first
// member's denial. Audit annotations are recorded by kube-apiserver under the group's webhook
// name, so each member's keys carry the member's name.

/** What one member did in a call. */
export interface MemberResult {
  name: string;
  /** Not run, and why: its own rules, selectors or matchConditions leave the request out. */
  skipped?: string;
  run?: ReviewRun;
  /** 1 when run again after a later member changed the object (reinvocationPolicy IfNeeded). */
  round?: number;
  ms: number;
}

/** A group's call: the combined answer and what each member did. */
export interface GroupRun extends ReviewRun {
  members: MemberResult[];
  /** The member whose answer denied first, in entry order. */
  decidedBy?: string;
}

/**
 * `<member>.<key>`: kube-apiserver records it as `<group webhook>/<member>.<key>`. A pair too long
 * for a qualified name's 63 characters gives the member a digest of its name instead.
 */
export function memberAuditKey(member: string, key: string): string {
  const named = `${member}.${key}`;
  if (isValidAuditKey(named)) return named;
  const digest = createHash('sha256').update(member).digest('hex').slice(0, 12);
  const short = `${digest}.${key}`;
  return isValidAuditKey(short) ? short : createHash('sha256').update(named).digest('hex').slice(0, 32);
}

const ran = (result: MemberResult): result is MemberResult & { run: ReviewRun } => result.run !== undefined;

/** A member's denial message, named (a failurePolicy answer names its webhook already). */
function namedMessage(result: MemberResult & { run: ReviewRun }): string {
  const message = result.run.verdict.status?.message ?? 'denied without explanation';
  return result.run.failure !== undefined ? message : `${result.name}: ${message}`;
}

function collect(results: readonly MemberResult[], unserved: readonly string[]): Pick<Verdict, 'warnings' | 'auditAnnotations'> & Pick<ReviewRun, 'droppedAnnotations' | 'failure'> {
  const warnings: string[] = [];
  const auditAnnotations: Record<string, string> = {};
  const droppedAnnotations: string[] = [];
  const failures: string[] = [];
  for (const result of results.filter(ran)) {
    warnings.push(...(result.run.verdict.warnings ?? []));
    for (const [key, value] of Object.entries(result.run.verdict.auditAnnotations ?? {})) auditAnnotations[memberAuditKey(result.name, key)] = value;
    droppedAnnotations.push(...result.run.droppedAnnotations.map((key) => `${result.name}: ${key}`));
    if (result.run.failure !== undefined) failures.push(`${result.name}: ${result.run.failure}`);
  }
  warnings.push(...unserved.map(unservedWarning));
  return { warnings: cleanWarnings(warnings), auditAnnotations, droppedAnnotations, ...(failures.length > 0 ? { failure: failures.join('; ') } : {}) };
}

function denialOf(denials: readonly (MemberResult & { run: ReviewRun })[]): { decision: ReviewDecision; status: DenialStatus } {
  const first = denials[0]!;
  const status: DenialStatus = { code: first.run.verdict.status?.code ?? 403, message: denials.map(namedMessage).join('; ') };
  const reason = first.run.verdict.status?.reason;
  if (reason !== undefined) status.reason = reason;
  return { decision: first.run.verdict.decision, status };
}

/**
 * The answer of a group whose members all looked at the same object (validating): every denying
 * member's message, in entry order, under the first denial's code and reason.
 */
export function combineFindings(results: MemberResult[], unserved: readonly string[] = []): GroupRun {
  const { warnings, auditAnnotations, droppedAnnotations, failure } = collect(results, unserved);
  const denials = results.filter(ran).filter((result) => !result.run.verdict.allowed);
  const verdict: Verdict = denials.length > 0 ? { ...denialOf(denials), allowed: false } : { decision: 'allowed', allowed: true };
  if (warnings) verdict.warnings = warnings;
  verdict.auditAnnotations = auditAnnotations;
  return { verdict, droppedAnnotations, members: results, ...(denials[0] ? { decidedBy: denials[0].name } : {}), ...(failure !== undefined ? { failure } : {}) };
}

/**
 * The answer of a group whose members ran one after another on the object as the earlier ones
 * left it (mutating): their patches in that order as one, or, when one denied (the last that
 * ran), its denial and no patch.
 */
export function combinePatches(results: MemberResult[], unserved: readonly string[] = []): GroupRun {
  const combined = combineFindings(results, unserved);
  if (!combined.verdict.allowed) return combined;
  const patch: PatchOperation[] = results.filter(ran).flatMap((result) => result.run.verdict.patch ?? []);
  if (patch.length > 0) combined.verdict.patch = patch;
  return combined;
}

/**
 * The warning the user sees for a name this replica does not serve (kubectl prints it as
 * `Warning: ...`). At most 120 characters for a name of the longest valid length (63),
 * kube-apiserver's advice for warnings.
 */
export function unservedWarning(name: string): string {
  return `this replica does not serve "${name}" (yet or any more); allowed`;
}
