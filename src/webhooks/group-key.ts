/**
 * Which entries one webhook can serve (grouped registration): those kube-apiserver would treat
 * alike. A grouped webhook is registered once, with the union of its members' rules, and the
 * server decides inside the call which members a request concerns; so the key holds what
 * kube-apiserver applies per webhook and the server cannot apply per member: the type, the
 * failurePolicy of a failed call, sideEffects (dry run), the timeout it waits, matchPolicy (which
 * versions it converts to), reinvocation and the review versions; and whatever part of a member's
 * matching the server cannot decide from the request itself (PinnedMatch).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';
import { NAMESPACE_NAME_LABEL } from './excluded-namespaces.js';
import type { FailurePolicy, LabelSelector, MatchCondition, MatchPolicy, ReinvocationPolicy, SideEffects, WebhookSpec, WebhookType } from '../admission/types.js';

/**
 * The timeout a group is registered with is its slowest member's, so members are grouped by
 * class: a 3 s rule waits at most 5 s for a call that fails, never 30 s.
 */
export type TimeoutClass = 5 | 10 | 30;

export function timeoutClass(seconds: number): TimeoutClass {
  if (seconds <= 5) return 5;
  return seconds <= 10 ? 10 : 30;
}

/**
 * Parts of a member's matching that the server cannot decide from the request, so they stay in
 * the registration and every member of the group has the same:
 * - `namespaceSelector` on namespace labels other than `kubernetes.io/metadata.name` (the request
 *   carries the namespace's name only; a Namespace cache would lift this);
 * - `matchConditions` that call `authorizer` (only kube-apiserver can answer it);
 * - with matchPolicy Equivalent, the API versions the rules list when they are not `v1` alone:
 *   kube-apiserver converts a request to the version the union's first matching rule names, so
 *   members listing other versions of a resource would see objects in a version they did not ask
 *   for (or none at all).
 */
export interface PinnedMatch {
  apiVersions?: string;
  namespaceSelector?: LabelSelector;
  matchConditions?: MatchCondition[];
}

export interface GroupKey {
  type: WebhookType;
  failurePolicy: FailurePolicy;
  sideEffects: SideEffects;
  timeoutClass: TimeoutClass;
  matchPolicy: MatchPolicy;
  /** Mutating only. */
  reinvocationPolicy?: ReinvocationPolicy;
  /** What the server registers for every webhook. */
  admissionReviewVersions: readonly ['v1'];
  pinned: PinnedMatch;
}

/** Whether the selector reads namespace labels the request does not carry. */
export function needsNamespaceLabels(selector: LabelSelector | undefined): boolean {
  const keys = [...Object.keys(selector?.matchLabels ?? {}), ...(selector?.matchExpressions ?? []).map((e) => e.key)];
  return keys.some((key) => key !== NAMESPACE_NAME_LABEL);
}

/** Whether a condition asks kube-apiserver's authorizer (which only kube-apiserver can answer). */
export function callsAuthorizer(conditions: readonly MatchCondition[] | undefined): boolean {
  return (conditions ?? []).some((condition) => /\bauthorizer\b/.test(condition.expression));
}

function pinnedVersions(spec: WebhookSpec): string | undefined {
  if (spec.matchPolicy !== 'Equivalent') return undefined;
  const sets = [...new Set(spec.rules.map((rule) => [...rule.apiVersions].sort().join(',')))];
  // Rules of one entry naming different versions: only the entry itself can be sure of them.
  if (sets.length !== 1) return `per-entry:${spec.name}`;
  return sets[0] === 'v1' ? undefined : sets[0];
}

export function pinnedMatch(spec: WebhookSpec): PinnedMatch {
  const pinned: PinnedMatch = {};
  const versions = pinnedVersions(spec);
  if (versions !== undefined) pinned.apiVersions = versions;
  if (needsNamespaceLabels(spec.namespaceSelector)) pinned.namespaceSelector = spec.namespaceSelector!;
  if (callsAuthorizer(spec.matchConditions)) pinned.matchConditions = [...spec.matchConditions!];
  return pinned;
}

export function groupKey(spec: WebhookSpec): GroupKey {
  return {
    type: spec.type,
    failurePolicy: spec.failurePolicy,
    sideEffects: spec.sideEffects,
    timeoutClass: timeoutClass(spec.timeoutSeconds),
    matchPolicy: spec.matchPolicy,
    ...(spec.type === 'mutating' ? { reinvocationPolicy: spec.reinvocationPolicy ?? 'Never' } : {}),
    admissionReviewVersions: ['v1'],
    pinned: pinnedMatch(spec),
  };
}

/** Equal keys, equal ids. */
export const groupKeyId = (key: GroupKey): string => canonicalJson(key);

/**
 * The group's webhook name, from its key alone: adding, removing or reordering members never
 * renames it. Readable for the common keys (`validating-fail-t5`, `mutating-ignore-t10-reinvoke`),
 * with a digest of the pinned matching when there is any. The type is in it, so a validating and
 * a mutating group never share a name (in metrics and logs). Always a DNS-1123 label.
 */
export function groupName(key: GroupKey): string {
  const parts = [key.type, key.failurePolicy.toLowerCase(), `t${key.timeoutClass}`];
  if (key.sideEffects === 'NoneOnDryRun') parts.push('dryrun');
  if (key.matchPolicy === 'Exact') parts.push('exact');
  if (key.reinvocationPolicy === 'IfNeeded') parts.push('reinvoke');
  if (Object.keys(key.pinned).length > 0) parts.push(createHash('sha256').update(canonicalJson(key.pinned)).digest('hex').slice(0, 10));
  return parts.join('-');
}

const GROUP_NAME = /^(?:validating|mutating)-(fail|ignore)-t(?:5|10|30)(-dryrun)?(-exact)?(-reinvoke)?(?:-[0-9a-f]{10})?$/;

/** What a group's name says of how it was registered (what a call's path says of its caller's configuration). */
export interface GroupNameFacts {
  failurePolicy: FailurePolicy;
  reinvocationPolicy: ReinvocationPolicy;
}

/** The facts groupName wrote into `name`; undefined for a name no version of the server gives a group. */
export function parseGroupName(name: string): GroupNameFacts | undefined {
  const match = GROUP_NAME.exec(name);
  if (!match) return undefined;
  return { failurePolicy: match[1] === 'fail' ? 'Fail' : 'Ignore', reinvocationPolicy: match[4] ? 'IfNeeded' : 'Never' };
}

/** The failurePolicy a group was registered with, read from its name; undefined for a name that is no group's. */
export function groupFailurePolicy(name: string): FailurePolicy | undefined {
  return parseGroupName(name)?.failurePolicy;
}
