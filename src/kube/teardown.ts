import type { Logger } from 'pino';
import { isAbortError } from '../util/abort.js';
import { retryWithBackoff } from '../util/backoff.js';
import { formatApiFailure, isForbidden, isRetryable } from './api-errors.js';
import type { ConfigurationApi, ConfigurationKind } from './configuration-api.js';

export interface TeardownStep {
  kind: ConfigurationKind;
  /** 'forbidden': a 403 while the install is being removed (its RBAC goes beside the Deployment). */
  outcome: 'deleted' | 'absent' | 'forbidden' | 'failed' | 'timed-out';
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
  options: { signal: AbortSignal; logger: Logger; deadlineMs: number; uninstalling?: boolean },
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
        if (options.uninstalling && isForbidden(error)) {
          const step: TeardownStep = { kind: api.kind, outcome: 'forbidden', ms: Math.round(performance.now() - started), error: formatApiFailure(error) };
          options.logger.info({ configuration: name, ...step }, 'no right to delete the webhook configuration any more (the uninstall removed the RBAC); the garbage collector deletes it through its ClusterRole ownerReference');
          return step;
        }
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
