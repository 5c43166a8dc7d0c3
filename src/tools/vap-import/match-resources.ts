import type { LabelSelector } from '../../admission/types.js';
import type { NamedRule } from './objects.js';

/** `*` in a list means every value; the intersection of two such lists, or undefined when empty. */
function intersectValues(a: readonly string[] = [], b: readonly string[] = []): string[] | undefined {
  if (a.includes('*')) return b.length > 0 ? [...b] : undefined;
  if (b.includes('*')) return a.length > 0 ? [...a] : undefined;
  const both = a.filter((value) => b.includes(value));
  return both.length > 0 ? both : undefined;
}

/**
 * The resources both patterns match, as one pattern: `pods` and `*` give `pods`; every
 * subresource of pods and the status of every resource give `pods/status`; undefined when none.
 */
function intersectResource(a: string, b: string): string | undefined {
  if (a === b) return a;
  const [aName = '', aSub] = a.split('/', 2);
  const [bName = '', bSub] = b.split('/', 2);
  // A star alone is every resource without a subresource; star-slash-star every subresource of every resource.
  if ((aSub === undefined) !== (bSub === undefined)) return undefined;
  const name = aName === '*' ? bName : bName === '*' || bName === aName ? aName : undefined;
  if (name === undefined) return undefined;
  if (aSub === undefined) return name;
  const sub = aSub === '*' ? bSub : bSub === '*' || bSub === aSub ? aSub : undefined;
  return sub === undefined ? undefined : `${name}/${sub}`;
}

function intersectResources(a: readonly string[] = [], b: readonly string[] = []): string[] | undefined {
  const both = [...new Set(a.flatMap((x) => b.flatMap((y) => intersectResource(x, y) ?? [])))];
  return both.length > 0 ? both : undefined;
}

function intersectScope(a: string | undefined, b: string | undefined): string | undefined | null {
  if (a === undefined || a === '*') return b;
  if (b === undefined || b === '*' || b === a) return a;
  return null;
}

/** Names: an empty list means every object. */
function intersectNames(a: readonly string[] = [], b: readonly string[] = []): string[] | null {
  if (a.length === 0) return [...b];
  if (b.length === 0) return [...a];
  const both = a.filter((name) => b.includes(name));
  return both.length > 0 ? both : null;
}

/** What a request must match to match both rules; undefined when no request does. */
export function intersectRule(a: NamedRule, b: NamedRule): NamedRule | undefined {
  const operations = intersectValues(a.operations, b.operations);
  const apiGroups = intersectValues(a.apiGroups, b.apiGroups);
  const apiVersions = intersectValues(a.apiVersions, b.apiVersions);
  const resources = intersectResources(a.resources, b.resources);
  const scope = intersectScope(a.scope, b.scope);
  const resourceNames = intersectNames(a.resourceNames, b.resourceNames);
  if (!operations || !apiGroups || !apiVersions || !resources || scope === null || resourceNames === null) return undefined;
  return { operations, apiGroups, apiVersions, resources, ...(scope ? { scope } : {}), ...(resourceNames.length > 0 ? { resourceNames } : {}) };
}

/**
 * A request matches a policy and its binding when it matches one rule of each: the union of the
 * pairwise intersections. A binding without rules narrows nothing.
 */
export function intersectRules(policy: readonly NamedRule[], binding: readonly NamedRule[] | undefined): NamedRule[] {
  if (!binding || binding.length === 0) return [...policy];
  return policy.flatMap((p) => binding.flatMap((b) => intersectRule(p, b) ?? []));
}

/** Both selectors must hold: one selector with the requirements of both (a label may be required twice). */
export function bothSelectors(a: LabelSelector | undefined, b: LabelSelector | undefined): LabelSelector | undefined {
  if (!a || isEmpty(a)) return b && !isEmpty(b) ? b : undefined;
  if (!b || isEmpty(b)) return a;
  const asRequirements = Object.entries(b.matchLabels ?? {}).map(([key, value]) => ({ key, operator: 'In' as const, values: [value] }));
  const matchExpressions = [...(a.matchExpressions ?? []), ...(b.matchExpressions ?? []), ...asRequirements];
  return { ...(a.matchLabels ? { matchLabels: a.matchLabels } : {}), ...(matchExpressions.length > 0 ? { matchExpressions } : {}) };
}

function isEmpty(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}
