import type { Logger } from 'pino';
import { isAbortError } from '../util/abort.js';
import { retryWithBackoff } from '../util/backoff.js';
import { formatApiFailure, isRetryable } from './api-errors.js';
import type { ConfigurationApi, ConfigurationKind } from './configuration-api.js';

export interface TeardownStep {
  kind: ConfigurationKind;
  outcome: 'deleted' | 'absent' | 'failed' | 'timed-out';
  ms: number;
  error?: string;
}

/**
 * Deletes both configurations concurrently, retrying transient failures, all bounded by
 * `signal` (the caller's deadline): kube-apiserver keeps calling the webhook until the deletions
 * land, so they must be quick, and they must never hold up the exit.
 */
export async function deleteWebhookConfigurations(
  apis: readonly ConfigurationApi[],
  name: string,
  options: { signal: AbortSignal; logger: Logger; deadlineMs: number },
): Promise<TeardownStep[]> {
  return await Promise.all(
    apis.map(async (api): Promise<TeardownStep> => {
      const started = performance.now();
      try {
        const outcome = await retryWithBackoff(() => api.delete(name, options.signal, options.deadlineMs), {
          initialMs: 50,
          maxMs: 500,
          maxAttempts: 10,
          signal: options.signal,
          retryable: isRetryable,
        });
        return { kind: api.kind, outcome, ms: Math.round(performance.now() - started) };
      } catch (error) {
        const timedOut = options.signal.aborted || isAbortError(error);
        const step: TeardownStep = {
          kind: api.kind,
          outcome: timedOut ? 'timed-out' : 'failed',
          ms: Math.round(performance.now() - started),
          error: formatApiFailure(error),
        };
        options.logger.error({ configuration: name, ...step }, 'deleting the webhook configuration did not succeed');
        return step;
      }
    }),
  );
}
