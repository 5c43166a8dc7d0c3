/**
 * One answer for a grouped webhook's call, from its members' answers. What kube-apiserver would
 * have made of the members registered one by one, said once: a validating group reports every
 * finding (each denying member's message, named; every warning) with the first denial's code;
 * a mutating group sends one JSON patch, the members' patches in entry order, or the first
 * member's denial. Audit annotations are recorded by kube-apiserver under the group's webhook
 * name, so each member's keys carry the member's name.
 */
import { createHash } from 'node:crypto';
import type { PatchOperation } from '../admission/patch.js';
import { cleanWarnings, isValidAuditKey } from './response-fields.js';
import type { DenialStatus, ReviewDecision, Verdict } from './review-encode.js';
import type { ReviewRun } from './run-review.js';
import { unservedWarning } from './unserved-webhook.js';

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
  verdict.warnings = warnings;
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
