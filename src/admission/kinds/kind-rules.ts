import type { RuleOperation, RuleWithOperations, WebhookType } from '../types.js';
import { BUILT_IN_KIND_TABLE, isBuiltInKind, type BuiltInKindName, type KindInfo } from './kind-table.js';

/**
 * What a typed webhook registers for unless it says otherwise: a validating one judges creates
 * and updates; a mutating one defaults creates only, as the built-in mutating rules do (a Pod's
 * spec is immutable after creation, so a patch to it on UPDATE fails the user's request).
 */
export const DEFAULT_KIND_OPERATIONS: Readonly<Record<WebhookType, readonly RuleOperation[]>> = {
  validating: ['CREATE', 'UPDATE'],
  mutating: ['CREATE'],
};

const OPERATIONS: readonly RuleOperation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*'];

/** The KindInfo of each `kind` entry; problems for names that are no built-in kind and objects that are no KindInfo. */
export function resolveKinds(kinds: readonly unknown[], problems: string[]): KindInfo[] {
  const resolved: KindInfo[] = [];
  if (kinds.length === 0) problems.push('kind must name at least one kind');
  for (const entry of kinds) {
    if (isBuiltInKind(entry)) resolved.push(BUILT_IN_KIND_TABLE[entry]);
    else if (isKindInfo(entry)) resolved.push(entry);
    else if (typeof entry === 'string') {
      problems.push(`kind "${entry}" is not a built-in kind (${Object.keys(BUILT_IN_KIND_TABLE).join(', ')}); for a CRD use defineKind or the output of "kube-admission-server types --crd FILE"`);
    } else problems.push(`kind must be a built-in kind name or a KindInfo (defineKind), not ${JSON.stringify(entry)}`);
  }
  return resolved;
}

function isKindInfo(value: unknown): value is KindInfo {
  const info = value as Partial<KindInfo> | null;
  return (
    typeof info === 'object' &&
    info !== null &&
    typeof info.kind === 'string' &&
    typeof info.group === 'string' &&
    typeof info.version === 'string' &&
    typeof info.plural === 'string' &&
    typeof info.namespaced === 'boolean' &&
    Array.isArray(info.subresources) &&
    Array.isArray(info.containerSubresources)
  );
}

/** Checks `operations`; the problems say what is wrong. */
export function checkOperations(operations: readonly unknown[], problems: string[]): operations is RuleOperation[] {
  const before = problems.length;
  if (operations.length === 0) problems.push(`operations must list at least one of ${OPERATIONS.join(', ')}`);
  for (const operation of operations) {
    if (!(OPERATIONS as readonly unknown[]).includes(operation)) problems.push(`operations: unsupported operation ${JSON.stringify(operation)}; use ${OPERATIONS.join(', ')}`);
  }
  if (operations.includes('*') && operations.length > 1) problems.push('operations: "*" must be the only entry when present');
  return problems.length === before;
}

function scopeOf(kind: KindInfo): 'Namespaced' | 'Cluster' {
  return kind.namespaced ? 'Namespaced' : 'Cluster';
}

/**
 * The rules a typed webhook registers: `operations` on each kind's resource (kinds of one group,
 * version and scope share a rule), and an UPDATE rule for the subresources that carry containers
 * (`pods/ephemeralcontainers`, which `kubectl debug` writes) when `operations` cover UPDATE.
 */
export function rulesForKinds(kindRefs: readonly (KindInfo | BuiltInKindName)[], operations: readonly RuleOperation[] = DEFAULT_KIND_OPERATIONS.validating): RuleWithOperations[] {
  const kinds = kindRefs.map((k) => (typeof k === 'string' ? BUILT_IN_KIND_TABLE[k] : k));
  const byLocation = new Map<string, RuleWithOperations>();
  const add = (kind: KindInfo, ops: readonly RuleOperation[], resource: string): void => {
    const key = `${ops.join(',')}|${kind.group}|${kind.version}|${scopeOf(kind)}`;
    const rule = byLocation.get(key);
    if (rule) {
      if (!rule.resources.includes(resource)) rule.resources.push(resource);
      return;
    }
    byLocation.set(key, { operations: [...ops], apiGroups: [kind.group], apiVersions: [kind.version], resources: [resource], scope: scopeOf(kind) });
  };
  for (const kind of kinds) add(kind, operations, kind.plural);
  if (operations.includes('UPDATE') || operations.includes('*')) {
    for (const kind of kinds) for (const sub of kind.containerSubresources) add(kind, ['UPDATE'], `${kind.plural}/${sub}`);
  }
  return [...byLocation.values()];
}

/**
 * Given rules of a typed webhook may narrow what it registers for, never widen it to objects of
 * another type: each resource must be one of the kinds' (or a subresource carrying the kind's
 * object), in the kind's group and version.
 */
export function checkRulesForKinds(rules: readonly RuleWithOperations[], kinds: readonly KindInfo[], problems: string[]): void {
  rules.forEach((rule, index) => {
    for (const resource of rule.resources ?? []) {
      const fits = kinds.some(
        (kind) =>
          (rule.apiGroups ?? []).includes(kind.group) &&
          (rule.apiVersions ?? []).includes(kind.version) &&
          (resource === kind.plural || kind.subresources.some((sub) => resource === `${kind.plural}/${sub}`)),
      );
      if (!fits) {
        const allowed = kinds.map((k) => `${k.group || '""'}/${k.version} ${[k.plural, ...k.subresources.map((s) => `${k.plural}/${s}`)].join(', ')}`).join('; ');
        problems.push(
          `rules[${index}]: resource "${resource}" in apiGroups ${JSON.stringify(rule.apiGroups)} and apiVersions ${JSON.stringify(rule.apiVersions)} is not one of this webhook's kinds (${allowed}): a typed webhook receives only objects of its kinds (leave out "kind" for untyped rules)`,
        );
      }
    }
  });
}
