import type { KubeObject } from '../admission/types.js';
import { Pace } from './pace.js';

/** What is to be done about one object: judge it as it is now, or forget it. */
export type AuditJob =
  | { type: 'judge'; object: KubeObject; run: (object: KubeObject, force: boolean) => Promise<void>; force: boolean }
  | { type: 'forget'; run: () => void };

/** Resolves once the queue holds at most `below` jobs. */
interface Waiter {
  below: number;
  wake: () => void;
}

/**
 * The background audit's work, one object at a time at low priority (Pace): jobs by object uid,
 * the latest one winning (a watch that reports an object three times while it waits judges it
 * once; a delete after an update only forgets it), so the queue holds at most one job, and one
 * copy, per object.
 */
export class AuditQueue {
  readonly #jobs = new Map<string, AuditJob>();
  readonly #pace: Pace;
  readonly #onError: (error: unknown) => void;
  #wake: (() => void) | undefined;
  readonly #waiters: Waiter[] = [];

  /** `onError`: a job that threw (each job handles its own failures; this is the last net). */
  constructor(pace: Pace, onError: (error: unknown) => void) {
    this.#pace = pace;
    this.#onError = onError;
  }

  get size(): number {
    return this.#jobs.size;
  }

  /** Queues `job` for the object `uid`; one queued already is replaced, a forced judgement stays forced. */
  put(uid: string, job: AuditJob): void {
    const queued = this.#jobs.get(uid);
    if (queued?.type === 'judge' && job.type === 'judge' && queued.force) job = { ...job, force: true };
    this.#jobs.set(uid, job);
    this.#wake?.();
  }

  /** Marks a queued judgement forced (a re-list for a reason its resourceVersion does not show); false when none is queued. */
  force(uid: string): boolean {
    const queued = this.#jobs.get(uid);
    if (queued?.type !== 'judge') return false;
    this.#jobs.set(uid, { ...queued, force: true });
    return true;
  }

  /** Resolves once at most `below` jobs wait (a list reads its next page then: one page in memory). */
  async until(below: number, signal: AbortSignal): Promise<void> {
    if (this.#jobs.size <= below) return;
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push({
        below,
        wake: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      });
    });
  }

  /** Runs the jobs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.#wake?.(), { once: true });
    while (!signal.aborted) {
      const next = this.#jobs.entries().next();
      if (next.done) {
        this.#notify();
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
        continue;
      }
      const [uid, job] = next.value;
      this.#jobs.delete(uid);
      try {
        if (job.type === 'forget') job.run();
        else await this.#pace.run(() => job.run(job.object, job.force), signal);
      } catch (error) {
        if (signal.aborted) return;
        this.#onError(error);
      }
      this.#notify();
    }
  }

  #notify(): void {
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const waiter = this.#waiters[i]!;
      if (this.#jobs.size <= waiter.below) {
        this.#waiters.splice(i, 1);
        waiter.wake();
      }
    }
  }
}
