/**
 * Which entries a recent policy version removed or renamed away, recorded on the configurations by
 * the leader that registered the version (REMOVED_ENTRIES_ANNOTATION), for the entry overlap
 * (--entry-overlap). A replica that does not know an entry a call names must tell a removed one
 * (no current policy has it) from one a newer policy added (possibly enforcing: never answered
 * allowed, see skew-judge.ts). A replica started after the change never saw the removed entry,
 * and a kube-apiserver whose cache lags still calls it for a while: the record tells it (and
 * entry-definitions.ts which entry it runs answers for it, when one is defined alike).
 */
import type { WebhookConfiguration } from './configuration-api.js';
import type { PrepareConfiguration } from './register.js';
import { routedPathsOf, type ServiceRef } from './routed-paths.js';
import { routedEntries } from '../webhooks/group-path.js';

export const REMOVED_ENTRIES_ANNOTATION = 'kube-admission-server/removed-entries';
/**
 * How long an entry name outlives the configurations' routes by default (--entry-overlap): a
 * kube-apiserver's informer cache lags milliseconds to seconds, after a watch restart or under load
 * up to a relist; 15 minutes is far past that, and one whose cache is older than that is broken in
 * every other respect too.
 */
export const DEFAULT_ENTRY_OVERLAP_MS = 15 * 60_000;
/** The most recent removals kept (a policy rarely drops more than a few entries at once). */
export const MAX_REMOVED_ENTRIES = 256;

/** entry (`validating/require-team`) -> when it was removed (ISO 8601), as a configuration records it. */
export function removedEntries(configuration: WebhookConfiguration | undefined): Map<string, string> {
  try {
    const value = JSON.parse(configuration?.metadata?.annotations?.[REMOVED_ENTRIES_ANNOTATION] ?? '{}') as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return new Map();
    return new Map(Object.entries(value).filter((pair): pair is [string, string] => typeof pair[1] === 'string' && !Number.isNaN(Date.parse(pair[1]))));
  } catch {
    return new Map();
  }
}

/** The entries (`type/name`) a configuration routes to on `service`: entries' own paths and groups' members. */
export function entriesRoutedBy(configuration: WebhookConfiguration | undefined, service: ServiceRef): Set<string> {
  return new Set([...routedPathsOf([configuration], { service })].flatMap(routedEntries));
}

/**
 * The registration step that keeps the record: entries the live configuration routes to and the
 * one about to be written does not are added with the time; entries routed again, and records
 * older than `overlapMs`, leave it. Nothing is written while there is nothing to record.
 */
export function recordRemovedEntries(service: ServiceRef, overlapMs = DEFAULT_ENTRY_OVERLAP_MS, now: () => Date = () => new Date()): PrepareConfiguration {
  return (desired, actual) => {
    const at = now();
    const routedNow = entriesRoutedBy(desired, service);
    const recorded = removedEntries(actual);
    const kept = [...recorded].filter(([entry, when]) => !routedNow.has(entry) && at.getTime() - Date.parse(when) < overlapMs);
    const removed = [...entriesRoutedBy(actual, service)].filter((entry) => !routedNow.has(entry) && !recorded.has(entry)).map((entry): [string, string] => [entry, at.toISOString()]);
    const next = [...kept, ...removed].sort(([, a], [, b]) => Date.parse(b) - Date.parse(a)).slice(0, MAX_REMOVED_ENTRIES);
    if (next.length === 0 && actual?.metadata?.annotations?.[REMOVED_ENTRIES_ANNOTATION] === undefined) return desired;
    const value = JSON.stringify(Object.fromEntries(next.sort(([a], [b]) => (a < b ? -1 : 1))));
    return { ...desired, metadata: { ...desired.metadata, annotations: { ...desired.metadata?.annotations, [REMOVED_ENTRIES_ANNOTATION]: value } } } as WebhookConfiguration;
  };
}
