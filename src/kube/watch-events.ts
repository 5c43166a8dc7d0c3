import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { formatApiFailure } from './api-errors.js';

export interface WatchEventsOptions {
  kubeConfig: KubeConfig;
  /** Collection path, e.g. `/api/v1/namespaces/ns/secrets`. */
  path: string;
  /**
   * What is watched: one object by name (a fieldSelector on metadata.name, which RBAC resourceNames
   * allow), or the objects with a label (`labelSelector`, e.g. a Service's EndpointSlices).
   */
  name?: string;
  labelSelector?: string;
  /** For the log line when a watch ends. */
  what: string;
  /** Called for every event (ADDED, MODIFIED, DELETED, BOOKMARK...): a trigger, not the state. */
  onEvent: (phase: string) => void;
  signal: AbortSignal;
  logger: Logger;
}

/** Backoff between watch connections that end or fail: 0.2 s doubling to 5 s, reset by any event. */
const RESTART_BACKOFF = { initialMs: 200, maxMs: 5000 } as const;

/**
 * Watches one named object (or the objects with a label) until `signal` aborts, reconnecting with
 * backoff whenever the connection ends (kube-apiserver ends watches after a timeout, restarts, 410
 * Expired). Each new connection starts without a resourceVersion, so it sends an ADDED for what
 * exists: callers treat every event as "look again", which also covers what changed while no
 * watch was open.
 */
export async function watchEvents(options: WatchEventsOptions): Promise<void> {
  const watch = new Watch(options.kubeConfig);
  for (let attempt = 0; !options.signal.aborted; ) {
    const ended = await watchOnce(watch, options, () => (attempt = 0));
    if (options.signal.aborted) return;
    if (ended) options.logger.warn({ watch: options.what, error: formatApiFailure(ended) }, 'watch ended; restarting');
    await sleep(backoffDelay(attempt++, RESTART_BACKOFF), options.signal).catch(() => undefined);
  }
}

/** One watch connection; resolves when it ends (with its error, if any). */
function watchOnce(watch: Watch, options: WatchEventsOptions, onAnyEvent: () => void): Promise<unknown> {
  const { signal } = options;
  return new Promise<unknown>((resolve) => {
    let abortWatch = (): void => undefined;
    const finish = (error: unknown): void => {
      signal.removeEventListener('abort', onAbort);
      resolve(error);
    };
    // Ended at once on abort, whether or not the library reports the aborted stream.
    const onAbort = (): void => {
      abortWatch();
      finish(undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    watch
      .watch(
        options.path,
        options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : { fieldSelector: `metadata.name=${options.name ?? ''}` },
        (phase) => {
          onAnyEvent();
          options.onEvent(phase);
        },
        finish,
      )
      .then((controller) => {
        abortWatch = () => controller.abort();
        if (signal.aborted) controller.abort();
      }, finish);
  });
}
