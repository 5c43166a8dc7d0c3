import type { Logger } from 'pino';
import { retryWithBackoff } from '../util/backoff.js';
import { formatApiFailure, isRetryable } from './api-errors.js';
import type { KubeApi } from './client.js';
import { callApi } from './request-deadline.js';

/**
 * The ClusterRole that owns the configurations: deleting the install garbage-collects them.
 * Read at startup, so a passing API failure (a restart, a 5xx, no answer) is retried like a
 * registration is (about 10 s of backoff) instead of failing the start.
 */
export async function readOwnerClusterRole(api: KubeApi, name: string, signal: AbortSignal, logger?: Logger): Promise<{ name: string; uid: string }> {
  const role = await retryWithBackoff(() => callApi(signal, (o) => api.rbac.readClusterRole({ name }, o)), {
    initialMs: 100,
    maxMs: 2000,
    maxAttempts: 8,
    signal,
    retryable: isRetryable,
    onRetry: (error, attempt, delayMs) =>
      logger?.warn({ clusterRole: name, attempt: attempt + 1, delayMs, error: formatApiFailure(error) }, 'reading the owner ClusterRole failed; retrying'),
  });
  const uid = role.metadata?.uid;
  if (!uid) throw new Error(`ClusterRole ${name} has no uid`);
  return { name, uid };
}
