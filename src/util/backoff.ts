import { sleep } from './abort.js';

export interface BackoffOptions {
  /** First delay in milliseconds. */
  initialMs: number;
  /** Largest single delay in milliseconds. */
  maxMs: number;
  /** Growth factor per attempt (default 2). */
  factor?: number;
  /** Fraction of each delay that is randomised, 0..1 (default 0.2): replicas must not retry in step. */
  jitter?: number;
}

/** The delay before retry number `attempt` (0-based), with jitter applied. */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const factor = options.factor ?? 2;
  const jitter = options.jitter ?? 0.2;
  const base = Math.min(options.maxMs, options.initialMs * factor ** attempt);
  return Math.round(base * (1 - jitter + 2 * jitter * random()));
}

export interface RetryOptions extends BackoffOptions {
  /** Most attempts in all (the first included). */
  maxAttempts: number;
  signal?: AbortSignal;
  /** Whether a failure is worth another attempt; default: every failure. */
  retryable?: (error: unknown) => boolean;
  /** The least wait the failure itself asks for (a server's Retry-After), in milliseconds; the backoff is never shorter. */
  retryAfterMs?: (error: unknown) => number | undefined;
  /** Called before each wait, for logs and metrics. */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Calls `fn` until it succeeds, with capped exponential backoff and jitter. Gives up with the
 * last error after `maxAttempts`, at once on a non-retryable error, or when `signal` aborts.
 */
export async function retryWithBackoff<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (error) {
      const last = attempt + 1 >= options.maxAttempts;
      if (last || options.signal?.aborted || !(options.retryable?.(error) ?? true)) throw error;
      const delayMs = Math.max(backoffDelay(attempt, options), options.retryAfterMs?.(error) ?? 0);
      options.onRetry?.(error, attempt, delayMs);
      await sleep(delayMs, options.signal);
    }
  }
}
