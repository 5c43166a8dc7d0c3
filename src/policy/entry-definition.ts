/**
 * What decides an entry's answers apart from its name: a digest of its policy-file entry (every
 * field but `name`, keys sorted) and of the namespaces its handler leaves alone. Two entries with
 * the same definition answer every review alike, so a replica asked for a name it does not run (a
 * rule renamed, and a kube-apiserver whose cache still routes the other name) can answer with the
 * entry it runs under the other name. Any difference (a parameter, a mode, a default spelled out)
 * makes another definition: such a call is answered as an unknown entry.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';
import { entryKey } from '../webhooks/group-path.js';
import type { PolicyEntry } from './policy.js';

/** `sha256:<32 hex>`: 128 bits, enough to tell definitions apart, short enough to record hundreds. */
export function entryDefinition(source: unknown, excludedNamespaces: readonly string[]): string {
  const fields = source !== null && typeof source === 'object' && !Array.isArray(source) ? { ...(source as Record<string, unknown>), name: undefined } : source;
  const input = canonicalJson({ entry: fields, excludedNamespaces: [...new Set(excludedNamespaces)].sort() });
  return `sha256:${createHash('sha256').update(input).digest('hex').slice(0, 32)}`;
}

/** Each entry's definition by `type/name` (entries parsed from a file have one). */
export function entryDefinitions(entries: readonly PolicyEntry[]): Map<string, string> {
  return new Map(entries.flatMap((entry) => (entry.definition ? [[entryKey(entry.spec.type, entry.spec.name), entry.definition] as const] : [])));
}
