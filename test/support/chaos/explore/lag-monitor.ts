/**
 * How late this process's event loop runs: the chaos run hosts the API double, the controllers,
 * the kubelet and the load in one process, and on a loaded machine it can lag by seconds. What it
 * observes late (a process's exit) is judged with that lag added, and the run reports it.
 */
const EVERY_MS = 100;

export class LagMonitor {
  readonly #samples: { at: number; lagMs: number }[] = [];
  readonly #timer: NodeJS.Timeout;
  #expected = performance.now() + EVERY_MS;

  constructor() {
    this.#timer = setInterval(() => {
      const now = performance.now();
      const lagMs = Math.max(0, now - this.#expected);
      this.#expected = now + EVERY_MS;
      if (lagMs > 50) this.#samples.push({ at: Date.now(), lagMs });
    }, EVERY_MS);
    this.#timer.unref();
  }

  /** The largest lag seen between two Date.now() times (0 when it kept up). */
  worstBetween(from: number, to: number): number {
    return Math.max(0, ...this.#samples.filter((s) => s.at >= from && s.at <= to + 5000).map((s) => s.lagMs));
  }

  get worstMs(): number {
    return Math.max(0, ...this.#samples.map((s) => s.lagMs));
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
