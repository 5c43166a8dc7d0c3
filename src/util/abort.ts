/** Helpers that make every wait bounded and cancellable. */

/** Resolves after `ms`, or rejects with the signal's reason as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A signal that aborts when any of `signals` aborts or after `timeoutMs`, whichever comes first.
 * The timeout reason is a `TimeoutError` DOMException. Its timer does not keep the process alive:
 * use withTimeout where nothing else does.
 *
 * Not `AbortSignal.any([..., AbortSignal.timeout(ms)])`: a composite signal holds its sources
 * weakly (Node 20 and 24), so once nothing else references the timeout signal a garbage
 * collection can take it and the deadline never fires. Here the timer's closure holds the
 * controller until it fires.
 */
export function deadlineSignal(timeoutMs: number, ...signals: (AbortSignal | undefined)[]): AbortSignal {
  const parts = signals.filter((s): s is AbortSignal => s !== undefined);
  const expiry = new AbortController();
  const ms = Math.max(0, timeoutMs);
  setTimeout(() => expiry.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError')), ms).unref();
  return parts.length === 0 ? expiry.signal : AbortSignal.any([...parts, expiry.signal]);
}

/** True when `error` is what an aborted signal or an expired deadline rejects with. */
export function isAbortError(error: unknown): boolean {
  return (
    error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')
  );
}

/**
 * Runs `fn` with a signal bounded by `timeoutMs`; rejects with a TimeoutError past it, even when
 * `fn` ignores its signal. The timer is referenced (unlike AbortSignal.timeout), so a pending
 * deadline keeps the process alive until it settles, and it is cleared as soon as `fn` settles.
 */
export async function withTimeout<T>(
  timeoutMs: number,
  parent: AbortSignal | undefined,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const signal = parent ? AbortSignal.any([parent, controller.signal]) : controller.signal;
  const timer = setTimeout(
    () => controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError')),
    Math.max(0, timeoutMs),
  );
  try {
    return await new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      fn(signal).then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  } finally {
    clearTimeout(timer);
  }
}
