/**
 * Every wait in the suite has its own deadline and says what it waited for. The figures are for a
 * busy two-core machine (a CI runner, a laptop building something else): they bound how long a
 * broken test takes to fail, never what a passing one proves, so they are generous.
 */

/** A compiled server process starting up to `ready`: seconds when idle, over 120 s seen at a load average of 25 on two cores. */
export const STARTUP_MS = 240_000;
/** A signalled server process exiting (the shutdown deadline is at most a few seconds in tests). */
export const EXIT_MS = 30_000;
/** Anything else that happens promptly on an idle machine: a log line, a request, a handshake. */
export const EVENT_MS = 30_000;

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

/**
 * How late a process may exit past its own shutdown bound on a busy machine: signal delivery, the
 * log flush before exit (bounded to 1 s in main.ts) and the process teardown. A test that proves
 * a bound also asserts what shows the code enforced it (the step that timed out, the order).
 * Measured at a load average of 24 on two cores: an immediate exit (a second SIGTERM) took 6 s.
 */
export const EXIT_MARGIN_MS = 8000;

/**
 * A signal that aborts after `timeoutMs` (a `TimeoutError`) or when `signal` does. Not
 * `AbortSignal.any([AbortSignal.timeout(ms), ...])`: a composite signal holds its sources weakly,
 * so after a garbage collection that timeout may never fire and the wait hangs. The timer here
 * holds its controller until it fires. (src/util/abort.ts has the same for the server; the test
 * support stays independent of src/.)
 */
export function deadlineSignal(timeoutMs: number, signal?: AbortSignal): AbortSignal {
  const expiry = new AbortController();
  setTimeout(() => expiry.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError')), timeoutMs).unref();
  return signal ? AbortSignal.any([signal, expiry.signal]) : expiry.signal;
}
