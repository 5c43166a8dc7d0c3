import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { namespaceObjectOf, type NamespaceSource } from '../admission/namespace-object.js';
import type { KubeObject } from '../admission/types.js';
import { describeApiFailure } from './api-errors.js';
import { listAndWatch } from './list-watch.js';
import type { ListTarget } from './paged-list.js';

const NAMESPACES: ListTarget = { path: '/api/v1/namespaces', apiVersion: 'v1', kind: 'Namespace' };
const PAGE_SIZE = 500;
const PAGE_TIMEOUT_MS = 30_000;

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

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The cluster's Namespaces, kept by one list and one watch per process (listAndWatch, as
 * client-go's informers keep kube-apiserver's own caches). Each namespace is kept as
 * namespaceObject shows it, so the review path reads a Map and makes no API call. (Not
 * client-node's ListWatch: it stops for good on the first error, has no bookmarks, and says
 * nothing when its first list is in.)
 */
export class NamespaceCache implements NamespaceSource {
  readonly #options: NamespaceCacheOptions;
  #namespaces = new Map<string, KubeObject>();
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
    let next = new Map<string, KubeObject>();
    await listAndWatch({
      kubeConfig: this.#options.kubeConfig,
      target: NAMESPACES,
      pageSize: PAGE_SIZE,
      timeoutMs: PAGE_TIMEOUT_MS,
      signal,
      logger: this.#options.logger,
      ...(this.#options.retry ? { retry: this.#options.retry } : {}),
      handlers: {
        listStarted: () => (next = new Map()),
        listed: async (items) => {
          for (const item of items) this.#keep(next, item);
        },
        listDone: async () => this.#replace(next),
        event: (type, object) => this.#apply(type, object),
        failed: (error) => {
          this.#lastError = errorText(error);
          const { code } = describeApiFailure(error);
          this.#refused = code === 401 || code === 403;
        },
      },
    });
  }

  /** A fresh list replaces the cache as a whole (what disappeared while not watching is gone). */
  #replace(next: Map<string, KubeObject>): void {
    const before = this.#namespaces;
    this.#namespaces = next;
    if (this.#synced) for (const [name, namespace] of next) this.#changed(before.get(name), namespace);
    this.#lastError = undefined;
    this.#refused = false;
    if (!this.#synced) {
      this.#synced = true;
      this.#markSynced();
      this.#options.logger.info({ namespaces: next.size }, 'namespace cache synced');
    }
  }

  #apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void {
    const name = object.metadata?.name;
    if (!name) return;
    if (type === 'DELETED') {
      this.#namespaces.delete(name);
      return;
    }
    const before = this.#namespaces.get(name);
    this.#keep(this.#namespaces, object);
    const after = this.#namespaces.get(name);
    if (after) this.#changed(before, after);
  }

  #keep(into: Map<string, KubeObject>, namespace: KubeObject): void {
    const name = namespace.metadata?.name;
    if (name) into.set(name, namespaceObjectOf(namespace));
  }

  #changed(before: KubeObject | undefined, after: KubeObject): void {
    const name = after.metadata?.name;
    if (name && this.#options.onChange && (!before || shapeKey(before) !== shapeKey(after))) this.#options.onChange(name);
  }
}
