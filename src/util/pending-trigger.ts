import { sleep } from './abort.js';

/**
 * "Do it again soon", remembered: fire() marks work as pending and wakes a waiter; take() returns
 * at once when something fired since the last take(), otherwise at the next fire() or after its
 * period, whichever comes first. Fires during the work that follows coalesce into one more round.
 */
export class PendingTrigger {
  #pending: boolean;
  #wake: (() => void) | undefined;

  /** `pending`: whether the first take() returns at once (the first round runs without a fire()). */
  constructor(pending = true) {
    this.#pending = pending;
  }

  fire(): void {
    this.#pending = true;
    this.#wake?.();
  }

  /** Waits for a fire() (or `periodMs`, or the abort) unless one is pending, and consumes it. */
  async take(periodMs: number, signal: AbortSignal): Promise<void> {
    if (!this.#pending) {
      const woken = new AbortController();
      this.#wake = () => woken.abort();
      await sleep(periodMs, AbortSignal.any([signal, woken.signal])).catch(() => undefined);
      this.#wake = undefined;
    }
    this.#pending = false;
  }
}
