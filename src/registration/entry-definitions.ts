/**
 * The definition of every entry a configuration routes to, and of every entry recorded as removed
 * (removed-entries.ts), kept on the configuration by the leader (ENTRY_DEFINITIONS_ANNOTATION:
 * `type/name` -> definition, entry-definition.ts). A name a configuration has routed must be
 * answered by the rule it named for as long as a kube-apiserver may still route it: the replicas
 * that ran the rule keep it served for the entry overlap, and a replica that never ran it (a new
 * pod of a rollout, started with the renamed policy) answers with the entry it runs under the new
 * name when the record gives both one definition (a rename). The record is as long as the routes
 * plus the removed-entries record, which the overlap and MAX_REMOVED_ENTRIES bound.
 */
import type { WebhookConfiguration } from './configuration-api.js';
import type { PrepareConfiguration } from './register.js';
import type { ServiceRef } from './routed-paths.js';
import { recordedPolicyVersion } from './policy-order.js';
import { entriesRoutedBy, removedEntries } from './removed-entries.js';

export const ENTRY_DEFINITIONS_ANNOTATION = 'kube-admission-server/entry-definitions';

const DEFINITION = /^sha256:[0-9a-f]{32}$/;

/** `type/name` -> definition, as a configuration records it (malformed values left out). */
export function recordedDefinitions(configuration: WebhookConfiguration | undefined): Map<string, string> {
  try {
    const value = JSON.parse(configuration?.metadata?.annotations?.[ENTRY_DEFINITIONS_ANNOTATION] ?? '{}') as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return new Map();
    return new Map(Object.entries(value).filter((pair): pair is [string, string] => typeof pair[1] === 'string' && DEFINITION.test(pair[1])));
  } catch {
    return new Map();
  }
}

export interface EntryDefinitionsOptions {
  service: ServiceRef;
  /** The definitions of the entries this leader serves now (ServedHandlers.definitions()). */
  own: () => ReadonlyMap<string, string>;
  /** When this leader's policy file was written: a live configuration from a newer one keeps its own record. */
  policyModifiedAt?: () => Date;
}

/**
 * The registration step that writes the record, after the removed entries were recorded: a routed
 * entry's definition from this leader's policy, or from the live record when the live policy is
 * newer (the leader keeps it while its volume catches up, policy-order.ts); a removed entry's from
 * the live record, written while it was routed, or this leader's when it still serves it.
 */
export function recordEntryDefinitions(options: EntryDefinitionsOptions): PrepareConfiguration {
  return (desired, actual) => {
    const own = options.own();
    const live = recordedDefinitions(actual);
    const recordedAt = recordedPolicyVersion(actual)?.modified;
    const ownIsNewer = !options.policyModifiedAt || recordedAt === undefined || options.policyModifiedAt().getTime() >= Date.parse(recordedAt);
    const next = new Map<string, string>();
    for (const entry of entriesRoutedBy(desired, options.service)) {
      const definition = ownIsNewer ? (own.get(entry) ?? live.get(entry)) : (live.get(entry) ?? own.get(entry));
      if (definition) next.set(entry, definition);
    }
    for (const entry of removedEntries(desired).keys()) {
      const definition = live.get(entry) ?? own.get(entry);
      if (definition && !next.has(entry)) next.set(entry, definition);
    }
    if (next.size === 0 && actual?.metadata?.annotations?.[ENTRY_DEFINITIONS_ANNOTATION] === undefined) return desired;
    const value = JSON.stringify(Object.fromEntries([...next].sort(([a], [b]) => (a < b ? -1 : 1))));
    return { ...desired, metadata: { ...desired.metadata, annotations: { ...desired.metadata?.annotations, [ENTRY_DEFINITIONS_ANNOTATION]: value } } } as WebhookConfiguration;
  };
}
