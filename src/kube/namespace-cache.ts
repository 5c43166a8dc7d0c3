import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { namespaceObjectOf, type NamespaceSource } from '../admission/namespace-object.js';
import type { KubeObject } from '../admission/types.js';
import { sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { describeApiFailure, retryAfterMs } from './api-errors.js';
import { listPages, type ListTarget } from './paged-list.js';

const NAMESPACES: ListTarget = { path: '/api/v1/namespaces', apiVersion: 'v1', kind: 'Namespace' };
const PAGE_SIZE = 500;
const PAGE_TIMEOUT_MS = 30_000;
const RETRY = { initialMs: 500, maxMs: 30_000 };
/** Watches end after 5 to 10 minutes (as client-go's reflector asks), so no connection lives for ever. */
const WATCH_SECONDS = { min: 300, max: 600 };

export interface NamespaceCacheOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Test hook: the delays between failed attempts. */
  retry?: { initialMs: number; maxMs: number };
  /** Called when a namespace's namespaceObject changed (labels, annotations...), or one appeared, after the first list. */
  onChange?: (name: string) => void;
}

/** A namespaceObject without its resourceVersion: what a change that matters changes. */
function shapeKey(namespace: KubeObject): string {
  const { resourceVersion: _, ...metadata } = namespace.metadata ?? {};
  return JSON.stringify({ ...namespace, metadata });
}

interface WatchEnd {
  /** The watch failed (not a normal end). */
  error?: unknown;
  /** The resourceVersion is too old (410 Gone): list again. */
  expired: boolean;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isGone(value: unknown): boolean {
  const v = value as { code?: unknown; statusCode?: unknown } | null;
  return v !== null && typeof v === 'object' && (v.code === 410 || v.statusCode === 410);
}

/**
 * The cluster's Namespaces, kept by one list and one watch per process (a reflector, as
 * client-go's informers keep kube-apiserver's own caches): a paged list, then a watch from the
 * list's resourceVersion with bookmarks; an expired resourceVersion lists again, a failure
 * retries with capped backoff. Each namespace is kept as namespaceObject shows it, so the review
 * path reads a Map and makes no API call. (Not client-node's ListWatch: it stops for good on the
 * first error, has no bookmarks, and says nothing when its first list is in.)
 */
export class NamespaceCache implements NamespaceSource {
  readonly #options: NamespaceCacheOptions;
  #namespaces = new Map<string, KubeObject>();
  #resourceVersion = '';
  #synced = false;
  #lastError: string | undefined;
  /** The last failure was a refusal (401, 403): no retry gets past it until the rights change. */
  #refused = false;
  #whenSynced: Promise<void>;
  #markSynced: () => void = () => undefined;
  #stop = new AbortController();
  #running: Promise<void> | undefined;

  constructor(options: NamespaceCacheOptions) {
    this.#options = options;
    this.#whenSynced = new Promise((resolve) => (this.#markSynced = resolve));
  }

  get(name: string): KubeObject | undefined {
    return this.#namespaces.get(name);
  }

  get synced(): boolean {
    return this.#synced;
  }

  /** Why the last list or watch failed, if it did. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** Whether the last failure was the API refusing this ServiceAccount (not an outage or throttling). */
  get refused(): boolean {
    return this.#refused;
  }

  get size(): number {
    return this.#namespaces.size;
  }

  /** Starts listing and watching until stop() or `signal` aborts. */
  start(signal: AbortSignal): void {
    if (this.#running) return;
    const stop = AbortSignal.any([signal, this.#stop.signal]);
    this.#running = this.#run(stop);
  }

  /** Resolves once the first list is in; rejects when `signal` aborts first (a deadline). */
  async waitForSync(signal: AbortSignal): Promise<void> {
    if (this.#synced) return;
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      void this.#whenSynced.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  async stop(): Promise<void> {
    this.#stop.abort(new Error('namespace cache stopped'));
    await this.#running;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const retry = this.#options.retry ?? RETRY;
    for (let attempt = 0; !signal.aborted; ) {
      try {
        if (!this.#resourceVersion) await this.#list(signal);
        const end = await this.#watch(signal);
        if (end.expired) this.#resourceVersion = '';
        if (end.error === undefined) {
          attempt = 0;
          continue;
        }
        throw end.error;
      } catch (error) {
        if (signal.aborted) return;
        this.#lastError = errorText(error);
        const { code } = describeApiFailure(error);
        this.#refused = code === 401 || code === 403;
        this.#options.logger.warn({ error: this.#lastError, synced: this.#synced }, 'listing or watching namespaces failed; retrying');
        await sleep(Math.max(backoffDelay(attempt++, retry), retryAfterMs(error) ?? 0), signal).catch(() => undefined);
      }
    }
  }

  /** A fresh list replaces the cache as a whole (what disappeared while not watching is gone). */
  async #list(signal: AbortSignal): Promise<void> {
    const next = new Map<string, KubeObject>();
    let resourceVersion = '';
    for await (const page of listPages(this.#options.kubeConfig, NAMESPACES, { pageSize: PAGE_SIZE, timeoutMs: PAGE_TIMEOUT_MS, signal })) {
      for (const item of page.items as KubeObject[]) this.#keep(next, item);
      resourceVersion ||= page.resourceVersion;
    }
    const before = this.#namespaces;
    this.#namespaces = next;
    this.#resourceVersion = resourceVersion;
    if (this.#synced) for (const [name, namespace] of next) this.#changed(before.get(name), namespace);
    this.#lastError = undefined;
    this.#refused = false;
    if (!this.#synced) {
      this.#synced = true;
      this.#markSynced();
      this.#options.logger.info({ namespaces: next.size }, 'namespace cache synced');
    }
  }

  #keep(into: Map<string, KubeObject>, namespace: KubeObject): void {
    const name = namespace.metadata?.name;
    if (name) into.set(name, namespaceObjectOf(namespace));
  }

  #changed(before: KubeObject | undefined, after: KubeObject): void {
    const name = after.metadata?.name;
    if (name && this.#options.onChange && (!before || shapeKey(before) !== shapeKey(after))) this.#options.onChange(name);
  }

  /** One watch connection from the current resourceVersion; resolves when it ends. */
  #watch(signal: AbortSignal): Promise<WatchEnd> {
    const seconds = WATCH_SECONDS.min + Math.floor(Math.random() * (WATCH_SECONDS.max - WATCH_SECONDS.min));
    const query = { resourceVersion: this.#resourceVersion, allowWatchBookmarks: true, timeoutSeconds: seconds };
    return new Promise<WatchEnd>((resolve) => {
      let expired = false;
      let abortWatch = (): void => undefined;
      const finish = (error: unknown): void => {
        signal.removeEventListener('abort', onAbort);
        abortWatch();
        resolve({ expired: expired || isGone(error), ...(error && !isGone(error) ? { error } : {}) });
      };
      const onAbort = (): void => finish(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      const onEvent = (type: string, object: KubeObject): void => {
        if (type === 'ERROR') {
          expired ||= isGone(object);
          return;
        }
        const resourceVersion = object.metadata?.resourceVersion;
        if (type === 'ADDED' || type === 'MODIFIED') {
          const before = object.metadata?.name ? this.#namespaces.get(object.metadata.name) : undefined;
          this.#keep(this.#namespaces, object);
          const after = object.metadata?.name ? this.#namespaces.get(object.metadata.name) : undefined;
          if (after) this.#changed(before, after);
        }
        else if (type === 'DELETED' && object.metadata?.name) this.#namespaces.delete(object.metadata.name);
        if (resourceVersion) this.#resourceVersion = resourceVersion;
      };
      new Watch(this.#options.kubeConfig)
        .watch(NAMESPACES.path, query, onEvent, finish)
        .then((controller) => {
          abortWatch = () => controller.abort();
          if (signal.aborted) controller.abort();
        }, finish);
    });
  }
}
