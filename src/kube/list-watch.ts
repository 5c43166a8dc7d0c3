import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeObject } from '../admission/types.js';
import { sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { describeApiFailure, retryAfterMs } from './api-errors.js';
import { listPages, type ListTarget } from './paged-list.js';

/** What a list and watch of one resource reports, in order. */
export interface ListWatchHandlers {
  /** A list begins: the first, or one after the watch's resourceVersion expired. */
  listStarted(): void;
  /** One page of it; the next page is read once this resolves (so memory holds one page). */
  listed(items: KubeObject[]): Promise<void>;
  /** The list is complete: whatever was not listed is gone. */
  listDone(): Promise<void>;
  /** A watch event after the list. */
  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void;
  /** A list or watch failed (it is tried again after a backoff). */
  failed?(error: unknown): void;
}

export interface ListWatchOptions {
  kubeConfig: KubeConfig;
  /** The collection (all namespaces, or one: `/api/v1/namespaces/<ns>/pods`). */
  target: ListTarget;
  pageSize: number;
  /** Per page. */
  timeoutMs: number;
  handlers: ListWatchHandlers;
  signal: AbortSignal;
  logger: Logger;
  /** Test hook: the delays between failed attempts. */
  retry?: { initialMs: number; maxMs: number };
}

const RETRY = { initialMs: 500, maxMs: 30_000 };
/** Watches end after 5 to 10 minutes (as client-go's reflector asks), so no connection lives for ever. */
const WATCH_SECONDS = { min: 300, max: 600 };

const isGone = (value: unknown): boolean => {
  const v = value as { code?: unknown; statusCode?: unknown } | null;
  return v !== null && typeof v === 'object' && (v.code === 410 || v.statusCode === 410);
};

/**
 * A list, paged, then a watch from its resourceVersion with bookmarks, until `signal` aborts (a
 * reflector, without its cache: the handlers keep what they need of each object). A watch that
 * ends is resumed from the last resourceVersion seen; an expired one (410) lists again; a failure
 * retries with capped backoff, never sooner than the API's Retry-After.
 */
export async function listAndWatch(options: ListWatchOptions): Promise<void> {
  const retry = options.retry ?? RETRY;
  let resourceVersion = '';
  for (let attempt = 0; !options.signal.aborted; ) {
    try {
      if (!resourceVersion) resourceVersion = await list(options);
      const end = await watch(options, resourceVersion, (seen) => (resourceVersion = seen));
      if (end.expired) resourceVersion = '';
      if (end.error === undefined) {
        attempt = 0;
        continue;
      }
      throw end.error;
    } catch (error) {
      if (options.signal.aborted) return;
      options.handlers.failed?.(error);
      const { code, message } = describeApiFailure(error);
      options.logger.warn({ resource: options.target.path, code, error: message }, 'listing or watching failed; retrying');
      await sleep(Math.max(backoffDelay(attempt++, retry), retryAfterMs(error) ?? 0), options.signal).catch(() => undefined);
    }
  }
}

/** One list, page by page; resolves with its resourceVersion. */
async function list(options: ListWatchOptions): Promise<string> {
  options.handlers.listStarted();
  let resourceVersion = '';
  for await (const page of listPages(options.kubeConfig, options.target, { pageSize: options.pageSize, timeoutMs: options.timeoutMs, signal: options.signal })) {
    resourceVersion ||= page.resourceVersion;
    await options.handlers.listed(page.items as KubeObject[]);
  }
  await options.handlers.listDone();
  return resourceVersion;
}

interface WatchEnd {
  error?: unknown;
  expired: boolean;
}

function watch(options: ListWatchOptions, from: string, seen: (resourceVersion: string) => void): Promise<WatchEnd> {
  const { signal } = options;
  const seconds = WATCH_SECONDS.min + Math.floor(Math.random() * (WATCH_SECONDS.max - WATCH_SECONDS.min));
  const query = { resourceVersion: from, allowWatchBookmarks: true, timeoutSeconds: seconds };
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
      if (resourceVersion) seen(resourceVersion);
      if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') options.handlers.event(type, { apiVersion: options.target.apiVersion, kind: options.target.kind, ...object });
    };
    new Watch(options.kubeConfig)
      .watch(options.target.path, query, onEvent, finish)
      .then((controller) => {
        abortWatch = () => controller.abort();
        if (signal.aborted) controller.abort();
      }, finish);
  });
}
