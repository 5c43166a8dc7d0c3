/** A task that runs until its signal aborts; it may be handed an already aborted signal and must then return. */
export type Task = (signal: AbortSignal) => Promise<void>;

export interface ExclusiveTaskOptions {
  /** How long to wait for an aborted task to finish before the next one starts anyway. */
  stopTimeoutMs: number;
  /** Called when a task outlived `stopTimeoutMs` after its abort (a bug: every wait takes the signal). */
  onStuck: (waitedMs: number) => void;
}

interface Running {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * At most one task at a time. `replace` aborts the running task at once and starts the new one
 * only after the old one has finished (waiting at most `stopTimeoutMs`); `stop` aborts and waits
 * the same way. Replacements in quick succession queue behind each other, each aborted by the
 * next, so only the last one gets to run with a live signal.
 */
export class ExclusiveTask {
  readonly #options: ExclusiveTaskOptions;
  #current: Running | undefined;

  constructor(options: ExclusiveTaskOptions) {
    this.#options = options;
  }

  /** Aborts the running task, waits for it, then runs `task` until `parent` or the next replace/stop aborts it. */
  replace(task: Task, parent: AbortSignal): Promise<void> {
    const previous = this.#current;
    previous?.controller.abort(new Error('replaced by a newer task'));
    const controller = new AbortController();
    const signal = AbortSignal.any([parent, controller.signal]);
    const done = (async () => {
      if (previous) await this.#waitStopped(previous);
      // A task that throws has ended as surely as one that returns; its owner logs its failures.
      await task(signal).catch(() => undefined);
    })();
    this.#current = { controller, done };
    return done;
  }

  /** Aborts the running task (if any) and resolves once it has finished, or after `stopTimeoutMs`. */
  async stop(): Promise<void> {
    const current = this.#current;
    if (!current) return;
    current.controller.abort(new Error('stopped'));
    await this.#waitStopped(current);
  }

  async #waitStopped(running: Running): Promise<void> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.#options.stopTimeoutMs)));
    const stuck = await Promise.race([running.done.then(() => false), timedOut]);
    clearTimeout(timer);
    if (stuck) this.#options.onStuck(Math.round(performance.now() - started));
  }
}
