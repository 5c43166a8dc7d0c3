/**
 * When rejected material is looked at again: at its NotBefore when that is what kept it out (a
 * node clock a few seconds behind the issuer's), and on every poll interval in any case (a clock
 * stepped by NTP, a problem that goes away). One timer at a time, never longer than the poll
 * interval, cancelled when newer material arrives or the source stops.
 */

/** X.509 times have whole seconds: look a little after NotBefore so the check surely passes. */
const AFTER_NOT_BEFORE_MS = 50;

export class RetryTimer {
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: { pollIntervalMs: number; now: () => Date }) {}

  /** Calls `retry` once, at `validFrom` or after the poll interval, whichever is sooner. */
  schedule(validFrom: Date | undefined, retry: () => void): void {
    this.cancel();
    const untilValid = validFrom ? validFrom.getTime() - this.options.now().getTime() + AFTER_NOT_BEFORE_MS : Infinity;
    const delayMs = Math.max(0, Math.min(this.options.pollIntervalMs, untilValid));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      retry();
    }, delayMs);
    // The listeners keep the process alive; a pending retry alone must not.
    this.#timer.unref();
  }

  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
