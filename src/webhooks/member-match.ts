/**
 * Whether a member of a grouped webhook concerns a request: what kube-apiserver would have decided
 * had the entry been registered on its own (local-cluster/CONTRACT.md 3.7), for the parts the group's registration
 * does not carry. kube-apiserver called the group because the union of the rules matched; the
 * member's own rules, selectors and matchConditions are decided here. Parts the server cannot
 * decide from the request (group-key.ts, PinnedMatch) are always in the registration and so
 * already decided; parts all members share (SharedMatch) too.
 */
import { callsAuthorizer, needsNamespaceLabels } from './group-key.js';
import type { SharedMatch } from './grouping.js';
import { selectorMatches } from './label-selector.js';
import type { AdmissionRequest, WebhookSpec } from '../admission/types.js';
import { matchConditionsResult, namespaceLabels, objectSelectorMatches, ruleMatches, type MatchResult } from './webhook-match.js';

/** Nothing known about the caller's registration: every part the server can decide is decided. */
const NOTHING_SHARED: SharedMatch = { namespaceSelector: false, objectSelector: false, matchConditions: false };

/**
 * Whether `member` concerns `request`, and if not, why. `registered`: which of the member's
 * matching fields the group's registration carried (kube-apiserver decided them already).
 * A matchCondition error under the member's failurePolicy Fail is `matched: 'error'` (kube-apiserver
 * answers that with 403); under Ignore the member is skipped.
 */
export function memberMatches(member: WebhookSpec, request: AdmissionRequest, registered: SharedMatch = NOTHING_SHARED): MatchResult {
  if (!member.rules.some((rule) => ruleMatches(rule, request))) return { matched: false, why: 'no rule matches' };
  if (!registered.namespaceSelector && member.namespaceSelector && !needsNamespaceLabels(member.namespaceSelector)) {
    const labels = namespaceLabels(request, undefined);
    if (labels && !selectorMatches(member.namespaceSelector, labels)) return { matched: false, why: 'namespaceSelector does not match' };
  }
  if (!registered.objectSelector && !objectSelectorMatches(member, request)) return { matched: false, why: 'objectSelector does not match' };
  if (registered.matchConditions || callsAuthorizer(member.matchConditions)) return { matched: true };
  return matchConditionsResult(member, request);
}
