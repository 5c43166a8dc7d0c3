/**
 * Grouped registration: entries kube-apiserver can treat alike (group-key.ts) are served by one
 * webhook, so a write that many rules concern costs one call per group instead of one per rule.
 * The group is registered with the union of its members' rules; what the members do not share
 * (selectors, matchConditions) is left out of the registration and decided by the server for
 * each member (member-match.ts).
 */
import { canonicalJson } from '../util/canonical-json.js';
import { groupKey, groupKeyId, groupName, type GroupKey } from './group-key.js';
import type { RuleWithOperations, Webhook, WebhookSpec } from '../admission/types.js';

/** `auto`: entries are grouped (the default); `none`: one webhook per entry. */
export type GroupingMode = 'auto' | 'none';
export const GROUPING_MODES: readonly GroupingMode[] = ['auto', 'none'];

/** Which of the members' own matching fields the group's registration carries (all members have the same). */
export interface SharedMatch {
  namespaceSelector: boolean;
  objectSelector: boolean;
  matchConditions: boolean;
}

/** A grouped webhook: what registration publishes, and the entries it serves, in order. */
export interface WebhookGroup extends WebhookSpec {
  members: readonly Webhook[];
  /** Matching kube-apiserver already did for every member: the server need not do it again. */
  shared: SharedMatch;
}

/** Whether a registered webhook is a group (rather than one entry). */
export function isWebhookGroup(webhook: WebhookSpec): webhook is WebhookGroup {
  return 'members' in webhook && Array.isArray((webhook as WebhookGroup).members);
}

const allSame = (values: readonly unknown[]): boolean => new Set(values.map((value) => canonicalJson(value ?? null))).size <= 1;

/** Every member's rules, each once (scope written out, so `*` and no scope are one rule). */
function unionOfRules(members: readonly WebhookSpec[]): RuleWithOperations[] {
  const seen = new Set<string>();
  const rules: RuleWithOperations[] = [];
  for (const rule of members.flatMap((member) => member.rules)) {
    const written = { ...rule, scope: rule.scope ?? '*' };
    const id = canonicalJson(written);
    if (seen.has(id)) continue;
    seen.add(id);
    rules.push(structuredClone(rule));
  }
  return rules;
}

function buildGroup(key: GroupKey, members: readonly Webhook[]): WebhookGroup {
  const first = members[0]!;
  const shared: SharedMatch = {
    namespaceSelector: allSame(members.map((m) => m.namespaceSelector ?? {})),
    objectSelector: allSame(members.map((m) => m.objectSelector ?? {})),
    matchConditions: allSame(members.map((m) => m.matchConditions ?? [])),
  };
  return {
    name: groupName(key),
    type: key.type,
    rules: unionOfRules(members),
    failurePolicy: key.failurePolicy,
    sideEffects: key.sideEffects,
    timeoutSeconds: Math.max(...members.map((m) => m.timeoutSeconds)),
    matchPolicy: key.matchPolicy,
    ...(key.reinvocationPolicy ? { reinvocationPolicy: key.reinvocationPolicy } : {}),
    ...(shared.namespaceSelector && first.namespaceSelector ? { namespaceSelector: structuredClone(first.namespaceSelector) } : {}),
    ...(shared.objectSelector && first.objectSelector ? { objectSelector: structuredClone(first.objectSelector) } : {}),
    ...(shared.matchConditions && first.matchConditions?.length ? { matchConditions: structuredClone(first.matchConditions) } : {}),
    members: Object.freeze([...members]),
    shared,
  };
}

/**
 * The groups of `webhooks` (policy entries in file order, custom handlers after), each ordered as
 * its first member was, members in their own order (mutations apply in it).
 */
export function groupWebhooks(webhooks: readonly Webhook[]): WebhookGroup[] {
  const byKey = new Map<string, { key: GroupKey; members: Webhook[] }>();
  for (const webhook of webhooks) {
    const key = groupKey(webhook);
    const id = groupKeyId(key);
    const group = byKey.get(id);
    if (group) group.members.push(webhook);
    else byKey.set(id, { key, members: [webhook] });
  }
  return [...byKey.values()].map(({ key, members }) => buildGroup(key, members));
}

/** What registration publishes for `webhooks`: their groups, or (grouping `none`) each one. */
export function registeredWebhooks(webhooks: readonly Webhook[], mode: GroupingMode): readonly WebhookSpec[] {
  return mode === 'none' ? webhooks : groupWebhooks(webhooks);
}
