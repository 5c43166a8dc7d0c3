import { EventEmitter } from 'node:events';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { PendingTrigger } from '../util/pending-trigger.js';
import { formatApiFailure, retryAfterMs } from '../kube/api-errors.js';
import type { ConfigurationKind, DatedConfigurationApi, DatedRead, WebhookConfiguration } from './configuration-api.js';
import { unwrittenForAtLeastMs } from './unchanged-since.js';
import { watchEvents } from '../kube/watch-events.js';

/** The two configurations of this install as last read; undefined: it does not exist. */
export type LiveSnapshot = Readonly<Record<ConfigurationKind, WebhookConfiguration | undefined>> & {
  /**
   * Since when (performance.now() of this process) the API shows neither existing configuration
   * written, by its own clocks (unchanged-since.ts); undefined when it does not show it.
   */
  readonly unchangedSince?: number;
};

export interface LiveConfigurationsOptions {
  apis: readonly Pick<DatedConfigurationApi, 'kind' | 'collectionPath' | 'readDated'>[];
  kubeConfig: KubeConfig;
  configName: string;
  /** Read again this often without any event: a watch event can be lost. */
  resyncPeriodMs: number;
  logger: Logger;
}

/** Between failed reads: 0.5 s doubling to 10 s, never sooner than the API's Retry-After. */
const READ_BACKOFF = { initialMs: 500, maxMs: 10_000 } as const;

const versionKey = (snapshot: LiveSnapshot): string => `${snapshot.mutating?.metadata?.resourceVersion ?? '-'}/${snapshot.validating?.metadata?.resourceVersion ?? '-'}`;

/**
 * Since when (this process's clock) none of the configurations read has been written: the latest
 * of each one's receipt less the least time the API shows it unwritten. Undefined when one that
 * exists shows nothing, or none exists.
 */
function latestUnchangedSince(reads: readonly (DatedRead & { receivedAt: number })[]): number | undefined {
  const existing = reads.filter((r) => r.object !== undefined);
  const since = existing.map((r) => {
    const unwrittenMs = unwrittenForAtLeastMs(r.object!, r.apiDateMs);
    return unwrittenMs === undefined ? undefined : r.receivedAt - unwrittenMs;
  });
  return since.length === 0 || since.includes(undefined) ? undefined : Math.max(...(since as number[]));
}

/**
 * What this install's two webhook configurations say now, for every replica, leader or not: which
 * CAs kube-apiserver verifies this server with, and which paths it calls. A watch on each is the
 * trigger and a GET of both the state, read again every resync period in case an event is lost.
 * 'change' fires after every read that found something else than the one before. A failed read
 * keeps the last snapshot (the best knowledge there is) and is retried with backoff.
 */
export class LiveConfigurations extends EventEmitter<{ change: [snapshot: LiveSnapshot] }> {
  readonly #options: LiveConfigurationsOptions;
  #snapshot: LiveSnapshot | undefined;
  readonly #reread = new PendingTrigger();

  constructor(options: LiveConfigurationsOptions) {
    super();
    this.#options = options;
  }

  /** The last snapshot read; undefined until the first read succeeded. */
  get snapshot(): LiveSnapshot | undefined {
    return this.#snapshot;
  }

  /** Reads and watches until `signal` aborts; resolves then. */
  async run(signal: AbortSignal): Promise<void> {
    const { apis, kubeConfig, configName, logger } = this.#options;
    const watches = apis.map((api) =>
      watchEvents({ kubeConfig, path: api.collectionPath, name: configName, what: `live ${api.kind} configuration`, onEvent: () => this.refresh(), signal, logger }),
    );
    await Promise.all([this.#readLoop(signal), ...watches]);
  }

  /** Read again soon (an event came, or this process just wrote them). */
  refresh(): void {
    this.#reread.fire();
  }

  async #readLoop(signal: AbortSignal): Promise<void> {
    for (let failures = 0; !signal.aborted; ) {
      await this.#reread.take(this.#options.resyncPeriodMs, signal);
      if (signal.aborted) return;
      try {
        this.#take(await this.#read(signal));
        failures = 0;
      } catch (error) {
        if (signal.aborted) return;
        const delayMs = Math.max(backoffDelay(failures++, READ_BACKOFF), retryAfterMs(error) ?? 0);
        this.#options.logger.warn({ error: formatApiFailure(error), retryInMs: delayMs }, 'reading the live webhook configurations failed; retrying');
        await sleep(delayMs, signal).catch(() => undefined);
        this.#reread.fire();
      }
    }
  }

  async #read(signal: AbortSignal): Promise<LiveSnapshot> {
    const { apis, configName } = this.#options;
    const read = await Promise.all(apis.map(async (api) => ({ kind: api.kind, ...(await api.readDated(configName, signal)), receivedAt: performance.now() })));
    const unchangedSince = latestUnchangedSince(read);
    return {
      mutating: undefined,
      validating: undefined,
      ...Object.fromEntries(read.map((r) => [r.kind, r.object])),
      ...(unchangedSince === undefined ? {} : { unchangedSince }),
    };
  }

  #take(snapshot: LiveSnapshot): void {
    const previous = this.#snapshot;
    this.#snapshot = snapshot;
    if (previous === undefined || versionKey(previous) !== versionKey(snapshot)) this.emit('change', snapshot);
  }
}
