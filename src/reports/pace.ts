import { sleep } from '../util/abort.js';

/** How the background audit shares the event loop with admission. */
export interface PaceOptions {
  /** Work runs in slices of at most about this much before the loop turns (admission requests are read then). */
  sliceMs: number;
  /** The share of one core the audit takes at most, 0..1: after a slice it rests in proportion. */
  share: number;
}

export const DEFAULT_PACE: PaceOptions = { sliceMs: 10, share: 0.5 };

/**
 * The audit's lower priority on the thread admission runs on: its units of work (judging an
 * object, building a namespace's reports) are timed, and once they add up to a slice the audit
 * rests (a timer, so the loop polls the sockets first) for as long as keeps its time under
 * `share`. Only the work counts, never the time the audit waited for input, so an audit that was
 * idle starts at once. An admission request arriving meanwhile waits at most about a slice.
 */
export class Pace {
  readonly #options: PaceOptions;
  readonly #now: () => number;
  readonly #wait: (ms: number, signal: AbortSignal) => Promise<void>;
  #busyMs = 0;

  /** `now` and `wait`: the clock and the sleep (tests pass their own). */
  constructor(options: PaceOptions = DEFAULT_PACE, now: () => number = () => performance.now(), wait: (ms: number, signal: AbortSignal) => Promise<void> = sleep) {
    this.#options = options;
    this.#now = now;
    this.#wait = wait;
  }

  /** Runs one unit of work, after a rest when the slice is spent. */
  async run<T>(work: () => T | Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.#busyMs >= this.#options.sliceMs) {
      await this.#wait((this.#busyMs * (1 - this.#options.share)) / this.#options.share, signal);
      this.#busyMs = 0;
    }
    const start = this.#now();
    try {
      return await work();
    } finally {
      this.#busyMs += this.#now() - start;
    }
  }
}
