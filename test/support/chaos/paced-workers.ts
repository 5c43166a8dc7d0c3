/**
 * A steady rate from `workers` loops, each paced so that together they run `task` `ratePerSecond`
 * times a second (a slow task delays only its own loop); the loops start spread over one interval.
 */
import { sleep } from '../../../local-cluster/util/waits.js';

export class PacedWorkers {
  readonly #stop = new AbortController();
  #loops: Promise<void>[] = [];

  constructor(private readonly options: { ratePerSecond: number; workers: number; task: () => Promise<void> }) {}

  start(): void {
    const intervalMs = (1000 * this.options.workers) / this.options.ratePerSecond;
    this.#loops = Array.from({ length: this.options.workers }, (_, worker) => this.#loop(intervalMs, (worker * intervalMs) / this.options.workers));
  }

  /** Stops starting tasks and waits for those under way. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#loops);
  }

  async #loop(intervalMs: number, offsetMs: number): Promise<void> {
    const signal = this.#stop.signal;
    await sleep(offsetMs, signal).catch(() => undefined);
    while (!signal.aborted) {
      const began = performance.now();
      await this.options.task();
      await sleep(Math.max(0, intervalMs - (performance.now() - began)), signal).catch(() => undefined);
    }
  }
}
