/**
 * A controller's work queue: keys deduplicated while waiting, one key never handled twice at
 * once, failures retried with capped backoff, and a delayed requeue for timed work.
 */
export type SyncResult = void | { requeueAfterMs: number };

const RETRY_BASE_MS = 100;
const RETRY_CAP_MS = 5000;

export class WorkQueue {
  readonly #pending = new Set<string>();
  readonly #active = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #failures = new Map<string, number>();
  #stopped = false;

  constructor(
    private readonly name: string,
    private readonly sync: (key: string) => Promise<SyncResult>,
    private readonly onError: (message: string) => void,
  ) {}

  add(key: string): void {
    if (this.#stopped) return;
    if (this.#active.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#pending.has(key)) return;
    this.#pending.add(key);
    setImmediate(() => void this.#run(key));
  }

  addAfter(key: string, delayMs: number): void {
    if (this.#stopped || this.#timers.has(key)) return;
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.#timers.set(key, timer);
  }

  async #run(key: string): Promise<void> {
    this.#pending.delete(key);
    if (this.#stopped) return;
    this.#active.add(key);
    try {
      const result = await this.sync(key);
      this.#failures.delete(key);
      if (result && result.requeueAfterMs >= 0) this.addAfter(key, result.requeueAfterMs);
    } catch (error) {
      const failures = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, failures);
      this.onError(`${this.name} ${key}: ${(error as Error).message}`);
      this.addAfter(key, Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** (failures - 1)));
    } finally {
      this.#active.delete(key);
      if (this.#dirty.delete(key)) this.add(key);
    }
  }

  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
