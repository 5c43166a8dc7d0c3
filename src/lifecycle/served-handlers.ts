import type { Logger } from 'pino';
import type { WebhookRegistry } from '../policy/registry.js';
import { webhookPath, type Webhook } from '../policy/types.js';

/** The webhook paths the live configurations route to, and word when that may have changed. */
export interface RoutedPaths {
  /** undefined: not read yet (every previous handler then counts as routed). */
  current(): ReadonlySet<string> | undefined;
  /** Calls `listener` after each new reading; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
}

export interface ServedHandlersOptions {
  registry: WebhookRegistry;
  /** Handlers from the TypeScript API, served with every policy version. */
  customWebhooks: readonly Webhook[];
  /**
   * The live configurations' routes. Undefined when this process registers nothing (no cluster,
   * --no-register): a new version then replaces the handlers at once.
   */
  routedPaths: RoutedPaths | undefined;
  /** How long a path stays served after the live configurations stopped routing to it (PROPAGATION_GRACE_MS). */
  graceMs: number;
  /** Ends the timers (the process lifetime). */
  signal: AbortSignal;
  logger: Logger;
  /** Monotonic milliseconds (performance.now by default). */
  now?: () => number;
}

/** Handlers of earlier versions kept for re-adoption, most recently replaced first; older ones are forgotten. */
export const MAX_PREVIOUS_HANDLERS = 64;

interface Previous {
  webhook: Webhook;
  /** Whether the last reading of the routes (or its time as a current handler) had it routed. */
  routed: boolean;
  /** Until when it was known routed: the reading that first showed it unrouted (routed ones: now). */
  routedAt: number;
  served: boolean;
}

/**
 * Which handlers are served while the policy changes. A new version's handlers are served at once,
 * next to the previous version's; a previous handler is retired only once no live configuration
 * has routed to its path for the propagation grace (kube-apiservers whose caches lag still call it
 * meanwhile). On the leader that is after its own PUT has landed; on a follower, after the
 * leader's, whose file may change a minute or two later or earlier than this one's. And when a
 * live configuration routes to a retired path again (a stale leader, an old copy applied by hand),
 * its handler is served again: no replica answers "not served" for a webhook kube-apiserver calls
 * while it still knows the handler. What registration publishes is the new version alone (desired()).
 */
export class ServedHandlers {
  readonly #options: ServedHandlersOptions;
  readonly #now: () => number;
  #desired: readonly Webhook[];
  readonly #previous = new Map<string, Previous>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ServedHandlersOptions, policyWebhooks: readonly Webhook[]) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#desired = [...policyWebhooks, ...options.customWebhooks];
    const unsubscribe = options.routedPaths?.subscribe(() => this.#review());
    options.signal.addEventListener(
      'abort',
      () => {
        unsubscribe?.();
        clearTimeout(this.#timer);
      },
      { once: true },
    );
  }

  /** The handlers of the current policy version (and the custom ones): what the leader registers. */
  desired(): readonly Webhook[] {
    return this.#desired;
  }

  /** Paths of earlier versions served right now. */
  retiring(): string[] {
    return [...this.#previous].filter(([, entry]) => entry.served).map(([path]) => path);
  }

  /** Serves a new policy version's handlers now; throws (serving what it served) when the set is invalid. */
  replace(policyWebhooks: readonly Webhook[]): void {
    const next = [...policyWebhooks, ...this.#options.customWebhooks];
    const nextPaths = new Set(next.map(webhookPath));
    const now = this.#now();
    const replaced = this.#desired.filter((webhook) => !nextPaths.has(webhookPath(webhook)));
    const stillServed = [...this.#previous].filter(([path, entry]) => entry.served && !nextPaths.has(path)).map(([, entry]) => entry.webhook);
    this.#options.registry.replace([...next, ...replaced, ...stillServed]);
    this.#desired = next;
    for (const path of nextPaths) this.#previous.delete(path);
    const kept = [...this.#previous];
    this.#previous.clear();
    for (const webhook of replaced) this.#previous.set(webhookPath(webhook), { webhook, routed: true, routedAt: now, served: true });
    for (const [path, entry] of kept.slice(0, Math.max(0, MAX_PREVIOUS_HANDLERS - this.#previous.size))) this.#previous.set(path, entry);
    if (!this.#options.routedPaths) {
      this.#retireAll('nothing is registered from this process');
      return;
    }
    if (this.retiring().length > 0) {
      this.#options.logger.info({ retiring: this.retiring(), graceMs: this.#options.graceMs }, 'previous handlers stay served until the webhook configurations no longer route to them');
    }
    this.#review();
  }

  #install(): void {
    this.#options.registry.replace([...this.#desired, ...[...this.#previous.values()].filter((entry) => entry.served).map((entry) => entry.webhook)]);
  }

  #retireAll(why: string): void {
    const retired = this.retiring();
    this.#previous.clear();
    this.#install();
    if (retired.length > 0) this.#options.logger.info({ retired, why, stillRetiring: [] }, 'previous handlers retired');
  }

  /** Brings the served set in line with the routes just read (or the clock), and sets the next timer. */
  #review(): void {
    if (this.#options.signal.aborted) return;
    clearTimeout(this.#timer);
    const routed = this.#options.routedPaths?.current();
    const now = this.#now();
    const readopted: string[] = [];
    const retired: string[] = [];
    let nextDue = Number.POSITIVE_INFINITY;
    for (const [path, entry] of this.#previous) {
      const routedNow = routed === undefined || routed.has(path);
      // Routed until this reading showed otherwise: the grace counts from here.
      if (routedNow || entry.routed) entry.routedAt = now;
      entry.routed = routedNow;
      if (routedNow) {
        if (!entry.served) readopted.push(path);
        entry.served = true;
      } else if (entry.served && now - entry.routedAt >= this.#options.graceMs) {
        entry.served = false;
        retired.push(path);
      }
      if (entry.served && !routedNow) nextDue = Math.min(nextDue, entry.routedAt + this.#options.graceMs);
    }
    if (readopted.length > 0 || retired.length > 0) this.#install();
    if (readopted.length > 0) this.#options.logger.warn({ readopted }, 'previous handlers served again: a live webhook configuration routes to them');
    if (retired.length > 0) {
      this.#options.logger.info({ retired, why: 'the webhook configurations no longer route to them', stillRetiring: this.retiring() }, 'previous handlers retired');
    }
    if (Number.isFinite(nextDue)) this.#timer = setTimeout(() => this.#review(), Math.max(0, nextDue - now));
  }
}
