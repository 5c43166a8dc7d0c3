/**
 * Bounded, cancellable waits for the local cluster. Its own copy, not src/util/abort.ts: the local
 * cluster is the product's oracle and never imports src/.
 */

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
 * A signal that aborts after `timeoutMs` (a `TimeoutError`) or when `signal` does. Not
 * `AbortSignal.any([AbortSignal.timeout(ms), ...])`: a composite signal holds its sources weakly,
 * so after a garbage collection that timeout may never fire and the wait hangs. The timer here
 * holds its controller until it fires.
 */
export function deadlineSignal(timeoutMs: number, signal?: AbortSignal): AbortSignal {
  const expiry = new AbortController();
  setTimeout(() => expiry.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError')), timeoutMs).unref();
  return signal ? AbortSignal.any([signal, expiry.signal]) : expiry.signal;
}

/** Awaits `promise`; past `timeoutMs` rejects with an error naming `what` was awaited. */
export async function within<T>(timeoutMs: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
