import { sleep } from '../util/abort.js';

/** How the background audit shares the event loop with admission. */
export interface PaceOptions {
  /** Work runs in slices at most this long before the loop turns (admission requests are read then). */
  sliceMs: number;
  /** The share of one core the audit takes at most, 0..1: after a slice it rests in proportion. */
  share: number;
}

export const DEFAULT_PACE: PaceOptions = { sliceMs: 10, share: 0.5 };

/**
 * The audit's lower priority on the thread admission runs on: work goes in short slices, and
 * after each the audit rests (a timer, so the loop polls the sockets first) for as long as keeps
 * its CPU under `share`. An admission request arriving meanwhile waits at most one slice, never
 * for the audit as a whole.
 */
export class Pace {
  readonly #options: PaceOptions;
  #sliceStart = performance.now();
  #idle = true;

  constructor(options: PaceOptions = DEFAULT_PACE) {
    this.#options = options;
  }

  /** The audit waits for input now: the next step starts a new slice. */
  idle(): void {
    this.#idle = true;
  }

  /** Call between units of work: returns at once while the slice lasts, else rests. */
  async step(signal: AbortSignal): Promise<void> {
    if (this.#idle) {
      this.#idle = false;
      this.#sliceStart = performance.now();
      return;
    }
    const worked = performance.now() - this.#sliceStart;
    if (worked < this.#options.sliceMs) return;
    await sleep((worked * (1 - this.#options.share)) / this.#options.share, signal);
    this.#sliceStart = performance.now();
  }
}
