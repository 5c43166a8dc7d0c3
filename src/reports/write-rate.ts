import { sleep } from '../util/abort.js';

/**
 * A token bucket for the report writes: at most `burst` at once, then `perSecond`. A write waits
 * for its token (abortably); the API server never sees the audit write faster than that.
 */
export class WriteRate {
  readonly #perSecond: number;
  readonly #burst: number;
  #tokens: number;
  #at: number;
  readonly #now: () => number;
  readonly #wait: (ms: number, signal: AbortSignal) => Promise<void>;

  /** `now` and `wait`: the clock and the sleep (tests pass their own). */
  constructor(perSecond: number, burst: number, now: () => number = () => performance.now(), wait: (ms: number, signal: AbortSignal) => Promise<void> = sleep) {
    this.#perSecond = perSecond;
    this.#burst = burst;
    this.#tokens = burst;
    this.#now = now;
    this.#wait = wait;
    this.#at = now();
  }

  async take(signal: AbortSignal): Promise<void> {
    for (;;) {
      const now = this.#now();
      this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#at) / 1000) * this.#perSecond);
      this.#at = now;
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        return;
      }
      await this.#wait(Math.ceil(((1 - this.#tokens) / this.#perSecond) * 1000), signal);
    }
  }
}
