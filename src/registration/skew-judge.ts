/**
 * What a replica answers for entries a call names that it does not know. During a policy change
 * replicas disagree for a minute or two, kube-apiservers' caches lag, and a grouped webhook's path
 * names every member its configuration expects. An entry this replica does not know is either
 * one a newer policy added (this replica is behind: the entry may be an enforcing rule, and
 * "allowed, not served" would let through what it denies) or one an older policy had (this
 * replica is ahead, or the call comes from a kube-apiserver whose cache lags: allowing it is what
 * the newest policy says). The live configurations tell them apart:
 * - an entry the leader recorded as removed (removed-entries.ts) is old: not served;
 * - anything else, an entry the live configuration still routes to included, may be enforcing
 *   now: the call is answered 503 for kube-apiserver to retry, on a new
 *   connection and so most likely on another replica; if none can answer before the deadline,
 *   the call fails and the webhook's failurePolicy (Fail: denied) decides, never an "allowed".
 * Before any of that: an entry the live configurations record with the definition of an entry this
 * replica serves (a rename: entry-definitions.ts) is answered by that entry, as the rule it named.
 * A webhook the live configuration registers with failurePolicy Ignore fails open anyway: not served.
 * A replica whose policy is newer than the registered one still retries an entry the configuration
 * routes to: a new pod that never ran a renamed rule's old name is Ready while the leader waits for
 * the replicas behind to serve the new name (entry-coverage.ts), and those still enforce the old one.
 */
import type { LiveSnapshot } from './live-configurations.js';
import type { ServiceRef } from './routed-paths.js';
import { entryKey } from '../webhooks/group-path.js';
import type { Webhook, WebhookType } from '../admission/types.js';
import type { UnknownEntries } from '../server/review/review.js';
import { recordedDefinitions } from './entry-definitions.js';
import { removedEntries } from './removed-entries.js';

export interface SkewJudgeOptions {
  /** The live configurations as this replica last read them. */
  snapshot: () => LiveSnapshot | undefined;
  service: ServiceRef;
  /** An entry this replica serves with `definition` (ServedHandlers.withDefinition). */
  withDefinition?: (type: WebhookType, definition: string) => Webhook | undefined;
}

export class SkewJudge implements UnknownEntries {
  readonly #options: SkewJudgeOptions;

  constructor(options: SkewJudgeOptions) {
    this.#options = options;
  }

  sameEntry(type: WebhookType, name: string): Webhook | undefined {
    const definition = recordedDefinitions(this.#options.snapshot()?.[type]).get(entryKey(type, name));
    return definition === undefined ? undefined : this.#options.withDefinition?.(type, definition);
  }

  decide(type: WebhookType, names: readonly string[], path?: string): 'unserved' | 'retry' {
    const snapshot = this.#options.snapshot();
    if (!snapshot) return 'retry';
    const configuration = snapshot[type];
    const { service } = this.#options;
    const registered = (configuration?.webhooks ?? []).find((w) => w.clientConfig?.service?.name === service.name && w.clientConfig.service.namespace === service.namespace && w.clientConfig.service.path === path);
    if (path !== undefined && registered?.failurePolicy === 'Ignore') return 'unserved';
    const removed = removedEntries(configuration);
    return names.every((name) => removed.has(entryKey(type, name))) ? 'unserved' : 'retry';
  }
}
