import { isDns1123Label } from '../admission/kube-names.js';
import type { WebhookType } from '../admission/types.js';
import type { Verdict } from './review-encode.js';

/**
 * A review for a webhook this replica does not serve. During a policy change replicas disagree
 * for a minute or two (each pod's ConfigMap volume is updated on its own schedule; a rolling
 * update mixes versions; the leader's PUT lands after its own handlers changed), so kube-apiserver
 * calls webhook paths some replicas do not know. A 404 would be a failed call, and under
 * failurePolicy Fail a rejected user request: the review is allowed with a warning instead.
 */

/**
 * Only a name some version of the server could serve (a DNS-1123 label, as the registry requires
 * and kube-apiserver's service-path validation allows) is taken for a skewed webhook; anything
 * else was never registered by anyone and stays a 404.
 */
export const isServableWebhookName = isDns1123Label;

/**
 * The warning the user sees (kubectl prints it as `Warning: ...`). At most 120 characters for a
 * name of the longest valid length (63), kube-apiserver's advice for warnings.
 */
export function unservedWarning(name: string): string {
  return `this replica does not serve "${name}" (yet or any more); allowed`;
}

export function unservedVerdict(name: string): Verdict {
  return { decision: 'allowed', allowed: true, warnings: [unservedWarning(name)] };
}

/** The label value for names beyond the cap: not a DNS-1123 label, so no webhook can be called that. */
export const OTHER_NAMES_LABEL = '_other';
/** Distinct names counted per webhook type before the rest share OTHER_NAMES_LABEL. */
export const MAX_COUNTED_NAMES = 32;

/**
 * Metric label values for names taken from the URL. Anyone who reaches the port can invent
 * names, so the label set is capped: the first MAX_COUNTED_NAMES distinct names per type keep
 * their own series (a policy change has a handful), every later one is counted as `_other`.
 */
export class BoundedNameLabels {
  readonly #seen: Record<WebhookType, Set<string>> = { validating: new Set(), mutating: new Set() };
  readonly #max: number;

  constructor(max = MAX_COUNTED_NAMES) {
    this.#max = max;
  }

  label(type: WebhookType, name: string): string {
    const seen = this.#seen[type];
    if (seen.has(name)) return name;
    if (seen.size >= this.#max) return OTHER_NAMES_LABEL;
    seen.add(name);
    return name;
  }
}
