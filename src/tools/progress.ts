/**
 * A progress line on stderr for runs longer than a few seconds: nothing for a short run, then one
 * line every few seconds (each a whole line, so a CI log or a redirected file reads well).
 */
export class Progress {
  readonly #write: (line: string) => void;
  readonly #what: string;
  readonly #afterMs: number;
  readonly #everyMs: number;
  readonly #started = performance.now();
  #next: number;
  #printed = false;

  constructor(write: (line: string) => void, what: string, options: { afterMs?: number; everyMs?: number } = {}) {
    this.#write = write;
    this.#what = what;
    this.#afterMs = options.afterMs ?? 3000;
    this.#everyMs = options.everyMs ?? 2000;
    this.#next = this.#started + this.#afterMs;
  }

  /** Cheap to call per object: reads the clock, prints only when a line is due. */
  update(describe: () => string): void {
    const now = performance.now();
    if (now < this.#next) return;
    this.#next = now + this.#everyMs;
    this.#printed = true;
    this.#write(`${this.#what}: ${describe()} (${((now - this.#started) / 1000).toFixed(1)} s)\n`);
  }

  /** The closing line, only when progress was shown. */
  done(describe: () => string): void {
    if (!this.#printed) return;
    this.#write(`${this.#what}: ${describe()}, done in ${((performance.now() - this.#started) / 1000).toFixed(1)} s\n`);
  }
}

/** 12,345 */
export const count = (n: number): string => n.toLocaleString('en-US');
