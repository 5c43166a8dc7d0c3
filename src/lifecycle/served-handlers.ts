import type { Logger } from 'pino';
import type { WebhookRegistry } from '../policy/registry.js';
import { webhookPath, type Webhook } from '../policy/types.js';
import { sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';

/** The webhook paths the registered configurations route to right now. */
export type RoutedPathsReader = (signal: AbortSignal) => Promise<ReadonlySet<string>>;

export interface ServedHandlersOptions {
  registry: WebhookRegistry;
  /** Handlers from the TypeScript API, served with every policy version. */
  customWebhooks: readonly Webhook[];
  /**
   * Reads the live configurations. Undefined when this process registers nothing (no cluster,
   * --no-register): a new version then replaces the handlers at once.
   */
  routedPaths: RoutedPathsReader | undefined;
  /** Ends the retirement loop (the process lifetime). */
  signal: AbortSignal;
  logger: Logger;
  /** Backoff between reads of the live configurations while handlers wait to be retired. */
  recheck?: { initialMs: number; maxMs: number };
}

const DEFAULT_RECHECK = { initialMs: 500, maxMs: 10_000 };

/**
 * Which handlers are served while the policy changes. A new version's handlers are served at
 * once, next to the previous version's; a previous handler is retired only once the live webhook
 * configurations no longer route to its path. On the leader that is after its own PUT has landed
 * (new handlers, then the PUT, then old handlers out); on a follower, after the leader's PUT,
 * whose file may change a minute or two later or earlier than this one's. Either way no replica
 * stops enforcing a webhook that kube-apiserver still calls. What registration publishes is the
 * new version alone (desired()).
 */
export class ServedHandlers {
  readonly #options: ServedHandlersOptions;
  #desired: readonly Webhook[];
  /** Previous handlers still served, by path. */
  #retiring = new Map<string, Webhook>();
  #retirement: AbortController | undefined;

  constructor(options: ServedHandlersOptions, policyWebhooks: readonly Webhook[]) {
    this.#options = options;
    this.#desired = [...policyWebhooks, ...options.customWebhooks];
  }

  /** The handlers of the current policy version (and the custom ones): what the leader registers. */
  desired(): readonly Webhook[] {
    return this.#desired;
  }

  /** Paths kept from previous versions until the configurations stop routing to them. */
  retiring(): string[] {
    return [...this.#retiring.keys()];
  }

  /** Serves a new policy version's handlers now; throws (serving what it served) when the set is invalid. */
  replace(policyWebhooks: readonly Webhook[]): void {
    const next = [...policyWebhooks, ...this.#options.customWebhooks];
    const nextPaths = new Set(next.map(webhookPath));
    // Everything served now (the previous version and what still retires from older ones) that
    // the new version does not replace.
    const retiring = this.#options.registry.list().filter((webhook) => !nextPaths.has(webhookPath(webhook)));
    this.#options.registry.replace([...next, ...retiring]);
    this.#desired = next;
    this.#retiring = new Map(retiring.map((webhook) => [webhookPath(webhook), webhook]));
    this.#startRetiring();
  }

  #install(): void {
    this.#options.registry.replace([...this.#desired, ...this.#retiring.values()]);
  }

  #startRetiring(): void {
    this.#retirement?.abort();
    this.#retirement = undefined;
    if (this.#retiring.size === 0) return;
    const reader = this.#options.routedPaths;
    if (!reader) {
      this.#retire(new Set(), 'nothing is registered from this process');
      return;
    }
    this.#options.logger.info({ retiring: this.retiring() }, 'previous handlers stay served until the webhook configurations no longer route to them');
    this.#retirement = new AbortController();
    void this.#retireWhenUnrouted(reader, AbortSignal.any([this.#options.signal, this.#retirement.signal]));
  }

  /** Drops the retiring handlers whose paths are not in `routed`. */
  #retire(routed: ReadonlySet<string>, why: string): void {
    const retired = this.retiring().filter((path) => !routed.has(path));
    if (retired.length === 0) return;
    for (const path of retired) this.#retiring.delete(path);
    this.#install();
    this.#options.logger.info({ retired, why, stillRetiring: this.retiring() }, 'previous handlers retired');
  }

  async #retireWhenUnrouted(reader: RoutedPathsReader, signal: AbortSignal): Promise<void> {
    const recheck = this.#options.recheck ?? DEFAULT_RECHECK;
    for (let attempt = 0; this.#retiring.size > 0 && !signal.aborted; attempt++) {
      try {
        const routed = await reader(signal);
        if (signal.aborted) return;
        this.#retire(routed, 'the webhook configurations no longer route to them');
      } catch (error) {
        if (signal.aborted) return;
        this.#options.logger.warn({ error: error instanceof Error ? error.message : String(error), retiring: this.retiring() }, 'reading the webhook configurations failed; previous handlers stay served');
      }
      if (this.#retiring.size === 0) return;
      await sleep(backoffDelay(attempt, recheck), signal).catch(() => undefined);
    }
  }
}
