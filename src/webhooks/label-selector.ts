import type { LabelSelector } from '../admission/types.js';

/** Whether `labels` satisfy `selector` (metav1.LabelSelector: matchLabels AND every expression); empty or absent matches all. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const has = Object.hasOwn(labels, key);
    switch (operator) {
      case 'In':
        return has && values.includes(labels[key]!);
      case 'NotIn':
        return !has || !values.includes(labels[key]!);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
    }
  });
}
