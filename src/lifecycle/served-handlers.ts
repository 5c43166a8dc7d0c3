import type { Logger } from 'pino';
import { entryKey, routedEntries } from '../webhooks/group-path.js';
import { isWebhookGroup, registeredWebhooks, type GroupingMode } from '../webhooks/grouping.js';
import type { WebhookRegistry } from '../webhooks/registry.js';
import { webhookPath } from '../webhooks/group-path.js';
import type { Webhook, WebhookSpec } from '../admission/types.js';
import type { RoutedPaths } from '../registration/routed-paths.js';


export interface ServedHandlersOptions {
  registry: WebhookRegistry;
  /** Handlers from the TypeScript API, served with every policy version (the dev loop replaces them: replaceCustom). */
  customWebhooks: readonly Webhook[];
  /**
   * The live configurations' routes. Undefined when this process registers nothing (no cluster,
   * --no-register): a new version then replaces the handlers at once.
   */
  routedPaths: RoutedPaths | undefined;
  /**
   * How long an entry stays served after the live configurations stopped routing to it
   * (--entry-overlap): a kube-apiserver whose cache lags still calls it meanwhile.
   */
  retainMs: number;
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
  /** Its definition (entry-definition.ts), when it came from a policy file. */
  definition: string | undefined;
  /** Whether the last reading of the routes (or its time as a current handler) had it routed. */
  routed: boolean;
  /** Until when it was known routed: the reading that first showed it unrouted (routed ones: now). */
  routedAt: number;
  served: boolean;
}

/**
 * Which handlers are served while the policy changes, entry by entry. A new version's entries are
 * served at once, next to the previous version's; a previous entry is retired only once no live
 * configuration has routed to it (on its own path, or as a member named in a group's path) for the
 * entry overlap, minutes: kube-apiservers whose caches lag still call it, for as long as they lag,
 * and no replica can know when the last one caught up. On the leader that
 * is after its own PUT has landed; on a follower, after the leader's, whose file may change a
 * minute or two later or earlier than this one's. And when a live configuration routes to a
 * retired entry again (a stale leader, an old copy applied by hand), it is served again: no
 * replica answers "not served" for an entry kube-apiserver calls while it still knows the
 * handler. Groups are only addresses of entries: a replica answers any group's path from the
 * entries it serves, so a group renamed or re-formed needs no retiring of its own. What
 * registration publishes is the new version alone, grouped as its policy says (desired()).
 */
export class ServedHandlers {
  readonly #options: ServedHandlersOptions;
  readonly #now: () => number;
  #desired: readonly Webhook[];
  #registered: readonly WebhookSpec[];
  #policyWebhooks: readonly Webhook[];
  #customWebhooks: readonly Webhook[];
  #grouping: GroupingMode;
  /** The current policy entries' definitions by `type/name`. */
  #definitions: ReadonlyMap<string, string>;
  readonly #previous = new Map<string, Previous>();
  #timer: NodeJS.Timeout | undefined;

  /** `definitions`: the policy entries' definitions by `type/name` (entryDefinitions()). */
  constructor(options: ServedHandlersOptions, policyWebhooks: readonly Webhook[], grouping: GroupingMode, definitions: ReadonlyMap<string, string> = new Map()) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#definitions = definitions;
    this.#policyWebhooks = policyWebhooks;
    this.#customWebhooks = options.customWebhooks;
    this.#grouping = grouping;
    this.#desired = [...policyWebhooks, ...options.customWebhooks];
    this.#registered = registeredWebhooks(this.#desired, grouping);
    this.#install();
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

  /**
   * The webhooks of the current policy version (and the custom ones) as registered: groups, or
   * each entry; the entries named in `leaveOut` (run natively) left out.
   */
  desired(leaveOut?: ReadonlySet<string>): readonly WebhookSpec[] {
    if (!leaveOut || leaveOut.size === 0) return this.#registered;
    return registeredWebhooks(
      this.#desired.filter((webhook) => !leaveOut.has(webhook.name)),
      this.#grouping,
    );
  }

  /** The entries of the current policy version and the custom ones. */
  entries(): readonly Webhook[] {
    return this.#desired;
  }

  /** The definitions of the entries served now (the current version's and the earlier ones still served), by `type/name`. */
  definitions(): Map<string, string> {
    const served = new Map(this.#definitions);
    for (const [key, entry] of this.#previous) if (entry.served && entry.definition && !served.has(key)) served.set(key, entry.definition);
    return served;
  }

  /** An entry served now of `type` with `definition` (the current version's first): it answers as any entry so defined would. */
  withDefinition(type: Webhook['type'], definition: string): Webhook | undefined {
    const current = this.#desired.find((webhook) => webhook.type === type && this.#definitions.get(entryKey(type, webhook.name)) === definition);
    if (current) return current;
    for (const entry of this.#previous.values()) if (entry.served && entry.webhook.type === type && entry.definition === definition) return entry.webhook;
    return undefined;
  }

  /** Paths (`/validate/<name>`) of earlier versions' entries served right now. */
  retiring(): string[] {
    return [...this.#previous.values()].filter((entry) => entry.served).map((entry) => webhookPath(entry.webhook));
  }

  /** Serves a new policy version's entries now; throws (serving what it served) when the set is invalid. */
  replace(policyWebhooks: readonly Webhook[], grouping: GroupingMode, definitions: ReadonlyMap<string, string> = new Map()): void {
    this.#swap(policyWebhooks, this.#customWebhooks, grouping, definitions);
  }

  /** The custom handlers served now. */
  get custom(): readonly Webhook[] {
    return this.#customWebhooks;
  }

  /**
   * Serves a new version of the custom handlers (the dev loop's reloaded module) as a new policy
   * version is served: an entry the new version keeps is answered by its new handler from now on,
   * one it drops stays served until the configurations no longer route to it. Throws (serving
   * what it served) when the set is invalid.
   */
  replaceCustom(customWebhooks: readonly Webhook[]): void {
    this.#swap(this.#policyWebhooks, customWebhooks, this.#grouping, this.#definitions);
  }

  #swap(policyWebhooks: readonly Webhook[], customWebhooks: readonly Webhook[], grouping: GroupingMode, definitions: ReadonlyMap<string, string>): void {
    const next = [...policyWebhooks, ...customWebhooks];
    const registered = registeredWebhooks(next, grouping);
    const nextKeys = new Set(next.map((webhook) => entryKey(webhook.type, webhook.name)));
    const now = this.#now();
    const replaced = this.#desired.filter((webhook) => !nextKeys.has(entryKey(webhook.type, webhook.name)));
    const stillServed = [...this.#previous].filter(([key, entry]) => entry.served && !nextKeys.has(key)).map(([, entry]) => entry.webhook);
    this.#options.registry.replace([...next, ...replaced, ...stillServed], groupsOf(registered));
    const previousDefinitions = this.#definitions;
    this.#definitions = definitions;
    this.#desired = next;
    this.#registered = registered;
    this.#policyWebhooks = policyWebhooks;
    this.#customWebhooks = customWebhooks;
    this.#grouping = grouping;
    for (const key of nextKeys) this.#previous.delete(key);
    const kept = [...this.#previous];
    this.#previous.clear();
    for (const webhook of replaced) {
      const key = entryKey(webhook.type, webhook.name);
      this.#previous.set(key, { webhook, definition: previousDefinitions.get(key), routed: true, routedAt: now, served: true });
    }
    for (const [key, entry] of kept.slice(0, Math.max(0, MAX_PREVIOUS_HANDLERS - this.#previous.size))) this.#previous.set(key, entry);
    if (!this.#options.routedPaths) {
      this.#retireAll('nothing is registered from this process');
      return;
    }
    if (this.retiring().length > 0) {
      this.#options.logger.info({ retiring: this.retiring(), retainMs: this.#options.retainMs }, 'previous handlers stay served until the webhook configurations no longer route to them');
    }
    this.#review();
  }

  #install(): void {
    const previous = [...this.#previous.values()].filter((entry) => entry.served).map((entry) => entry.webhook);
    this.#options.registry.replace([...this.#desired, ...previous], groupsOf(this.#registered));
  }

  #retireAll(why: string): void {
    const retired = this.retiring();
    this.#previous.clear();
    this.#install();
    if (retired.length > 0) this.#options.logger.info({ retired, why, stillRetiring: [] }, 'previous handlers retired');
  }

  /** The entries the live configurations route to now; undefined: not read yet. */
  #routedEntries(): ReadonlySet<string> | undefined {
    const paths = this.#options.routedPaths?.current();
    return paths === undefined ? undefined : new Set([...paths].flatMap(routedEntries));
  }

  /** Brings the served set in line with the routes just read (or the clock), and sets the next timer. */
  #review(): void {
    if (this.#options.signal.aborted) return;
    clearTimeout(this.#timer);
    const routed = this.#routedEntries();
    const now = this.#now();
    const readopted: string[] = [];
    const retired: string[] = [];
    let nextDue = Number.POSITIVE_INFINITY;
    for (const [key, entry] of this.#previous) {
      const routedNow = routed === undefined || routed.has(key);
      const path = webhookPath(entry.webhook);
      // Routed until this reading showed otherwise: the overlap counts from here.
      if (routedNow || entry.routed) entry.routedAt = now;
      entry.routed = routedNow;
      if (routedNow) {
        if (!entry.served) readopted.push(path);
        entry.served = true;
      } else if (entry.served && now - entry.routedAt >= this.#options.retainMs) {
        entry.served = false;
        retired.push(path);
      }
      if (entry.served && !routedNow) nextDue = Math.min(nextDue, entry.routedAt + this.#options.retainMs);
    }
    if (readopted.length > 0 || retired.length > 0) this.#install();
    if (readopted.length > 0) this.#options.logger.warn({ readopted }, 'previous handlers served again: a live webhook configuration routes to them');
    if (retired.length > 0) {
      this.#options.logger.info({ retired, why: 'the webhook configurations no longer route to them', stillRetiring: this.retiring() }, 'previous handlers retired');
    }
    if (Number.isFinite(nextDue)) this.#timer = setTimeout(() => this.#review(), Math.max(0, nextDue - now));
  }
}

const groupsOf = (registered: readonly WebhookSpec[]) => registered.filter(isWebhookGroup);
