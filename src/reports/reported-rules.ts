import type { PolicyEntry } from '../policy/policy.js';
import type { Webhook } from '../admission/types.js';
import type { ReportedRule } from './results.js';

/**
 * The rules whose results are reported: the validating entries of the policy whose `report` is on
 * (the default), and the validating custom webhooks (TypeScript handlers), which have no entry and
 * are reported as written. Mutating webhooks have no results of their own: they run first, as
 * kube-apiserver would, and the validating ones judge what they made.
 */
export function reportedRules(entries: readonly PolicyEntry[], webhooks: readonly Webhook[]): Map<string, ReportedRule> {
  const byName = new Map(entries.map((entry) => [entry.spec.name, entry]));
  const reported = new Map<string, ReportedRule>();
  for (const webhook of webhooks) {
    if (webhook.type !== 'validating') continue;
    const entry = byName.get(webhook.name);
    if (entry && !entry.report.enabled) continue;
    reported.set(webhook.name, { name: webhook.name, ...(entry?.report.severity ? { severity: entry.report.severity } : {}), ...(entry?.report.category ? { category: entry.report.category } : {}) });
  }
  return reported;
}

/** The webhooks whose rules decide what is listed: the reported ones. */
export function reportedWebhooks(webhooks: readonly Webhook[], reported: ReadonlyMap<string, ReportedRule>): Webhook[] {
  return webhooks.filter((webhook) => webhook.type === 'validating' && reported.has(webhook.name));
}
