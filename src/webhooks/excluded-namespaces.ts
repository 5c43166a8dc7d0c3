import type { LabelSelector, LabelSelectorRequirement } from '../admission/types.js';

/** Namespaces no rule touches unless the policy file says otherwise: the control plane's. */
export const DEFAULT_EXCLUDED_NAMESPACES: readonly string[] = Object.freeze(['kube-system']);

/** The label every namespace carries with its own name (GA since Kubernetes 1.22). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * The namespaceSelector requirement that keeps kube-apiserver from calling a webhook for
 * `namespaces` at all: registration merges it into every webhook.
 */
export function excludedNamespaceRequirement(namespaces: readonly string[]): LabelSelectorRequirement {
  return { key: NAMESPACE_NAME_LABEL, operator: 'NotIn', values: [...new Set(namespaces)].sort() };
}

/** namespaceSelectorExcluding: the webhook's own selector plus `kubernetes.io/metadata.name NotIn [excluded...]`, as registered. */
export function namespaceSelectorExcluding(selector: LabelSelector | undefined, excluded: readonly string[]): LabelSelector {
  const expressions = [...(selector?.matchExpressions ?? []), excludedNamespaceRequirement(excluded)];
  return { ...(selector?.matchLabels ? { matchLabels: { ...selector.matchLabels } } : {}), matchExpressions: expressions };
}

/**
 * True when a request in `namespace` must be let through untouched. Handlers check this too,
 * so an exclusion still holds when the registered selector was edited or a caller bypasses it.
 * Cluster-scoped requests (no namespace) are never excluded.
 */
export function isExcludedNamespace(namespace: string | undefined, excluded: readonly string[]): boolean {
  return namespace !== undefined && namespace !== '' && excluded.includes(namespace);
}
