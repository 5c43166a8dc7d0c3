import type { Logger } from 'pino';
import { sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { PendingTrigger } from '../util/pending-trigger.js';
import { describeApiFailure, retryAfterMs } from '../kube/api-errors.js';
import type { ReportObject } from './report-objects.js';

/** What the sync needs: the reports a namespace should have now, and the writer that makes it so. */
export interface ReportSyncInputs {
  /** Built when the namespace is written, from what is kept then (at the audit's pace: it is CPU work on admission's thread). */
  build(namespace: string, signal: AbortSignal): readonly ReportObject[] | Promise<readonly ReportObject[]>;
  /** Writes what differs; resolves with how many writes it took. */
  sync(namespace: string, desired: readonly ReportObject[], signal: AbortSignal): Promise<number>;
  logger: Logger;
  /** How long changes gather before they are written (a burst of changes in a namespace is one write). */
  coalesceMs: number;
  /** After a failed write the namespace is tried again after this backoff. */
  retry?: { initialMs: number; maxMs: number };
}

const RETRY = { initialMs: 1000, maxMs: 30_000 };
/** Longest wait with nothing to do; a trigger wakes it sooner. */
const IDLE_MS = 60_000;

/**
 * Coalesced writes: changes mark their namespace dirty; once changes arrive, the sync lets them
 * gather for `coalesceMs`, then builds and writes each dirty namespace's reports, so a namespace
 * changed a hundred times within the window is written once, and one whose reports come out as
 * stored is not written at all. While held (a term's first scan), nothing is written: no report
 * ever shows a scan half done.
 */
export class ReportSync {
  readonly #inputs: ReportSyncInputs;
  #dirty = new Set<string>();
  readonly #trigger = new PendingTrigger(false);
  #held = true;
  #failures = 0;
  #writes = 0;
  #idleWaiters: (() => void)[] = [];

  constructor(inputs: ReportSyncInputs) {
    this.#inputs = inputs;
  }

  /** Writes made so far. */
  get writes(): number {
    return this.#writes;
  }

  get dirty(): number {
    return this.#dirty.size;
  }

  markDirty(namespace: string): void {
    this.#dirty.add(namespace);
    if (!this.#held) this.#trigger.fire();
  }

  /** Lets the writes start (the first scan is in). */
  release(): void {
    this.#held = false;
    if (this.#dirty.size > 0) this.#trigger.fire();
  }

  /** Resolves once nothing is dirty (and not held); for the first complete report set. */
  whenClean(signal: AbortSignal): Promise<void> {
    if (!this.#held && this.#dirty.size === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#idleWaiters.push(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** Until `signal` aborts: waits for changes, lets them gather, writes. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.#trigger.take(IDLE_MS, signal);
      if (signal.aborted || this.#held || this.#dirty.size === 0) continue;
      await sleep(this.#inputs.coalesceMs, signal).catch(() => undefined);
      if (signal.aborted) return;
      await this.#writeDirty(signal);
    }
  }

  async #writeDirty(signal: AbortSignal): Promise<void> {
    const namespaces = [...this.#dirty].sort();
    this.#dirty = new Set();
    for (const [index, namespace] of namespaces.entries()) {
      try {
        this.#writes += await this.#inputs.sync(namespace, await this.#inputs.build(namespace, signal), signal);
        this.#failures = 0;
      } catch (error) {
        if (signal.aborted) return;
        // What was not written stays dirty, and is tried again after the backoff.
        for (const left of namespaces.slice(index)) this.#dirty.add(left);
        const delayMs = Math.max(backoffDelay(this.#failures++, this.#inputs.retry ?? RETRY), retryAfterMs(error) ?? 0);
        const { code, message } = describeApiFailure(error);
        this.#inputs.logger.warn({ namespace: namespace || '(cluster)', code, error: message, retryInMs: delayMs }, 'writing reports failed; trying again');
        await sleep(delayMs, signal).catch(() => undefined);
        this.#trigger.fire();
        return;
      }
    }
    if (this.#dirty.size === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
    else this.#trigger.fire();
  }
}
