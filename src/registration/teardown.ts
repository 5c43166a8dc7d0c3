import type { Logger } from 'pino';
import { isAbortError } from '../util/abort.js';
import { retryWithBackoff } from '../util/backoff.js';
import { formatApiFailure, isForbidden, isRetryable } from '../kube/api-errors.js';
import type { ConfigurationApi, ConfigurationKind, WebhookConfiguration } from './configuration-api.js';

export interface TeardownStep {
  kind: ConfigurationKind;
  /**
   * 'kept': not this process's to delete (`why`). 'forbidden': a 403 while the install is being
   * removed (its RBAC goes beside the Deployment).
   */
  outcome: 'deleted' | 'absent' | 'kept' | 'forbidden' | 'failed' | 'timed-out';
  ms: number;
  why?: string;
  error?: string;
}

/** Whether the live configuration may be deleted: undefined when it may, else why not. */
export type DeletionCheck = (kind: ConfigurationKind, live: WebhookConfiguration) => string | undefined;

/** One configuration: read, checked, deleted as exactly that object (its uid and resourceVersion as preconditions). */
async function deleteIfAllowed(api: ConfigurationApi, name: string, check: DeletionCheck, signal: AbortSignal, deadlineMs: number): Promise<Pick<TeardownStep, 'outcome' | 'why'>> {
  const live = await api.read(name, signal);
  if (live === undefined) return { outcome: 'absent' };
  const why = check(api.kind, live);
  if (why !== undefined) return { outcome: 'kept', why };
  const { uid = '', resourceVersion = '' } = live.metadata ?? {};
  // Changed since the read (409): read and check again.
  return { outcome: await api.delete(name, signal, deadlineMs, { uid, resourceVersion }) };
}

/**
 * Deletes both configurations concurrently, each only when `check` allows what is live, retrying
 * transient failures and changes under way, all bounded by `signal` (the caller's deadline):
 * kube-apiserver keeps calling the webhook until the deletions land, so they must be quick, and
 * they must never hold up the exit.
 */
export async function deleteWebhookConfigurations(
  apis: readonly ConfigurationApi[],
  name: string,
  options: { signal: AbortSignal; logger: Logger; deadlineMs: number; check: DeletionCheck; uninstalling?: boolean },
): Promise<TeardownStep[]> {
  return await Promise.all(
    apis.map(async (api): Promise<TeardownStep> => {
      const started = performance.now();
      try {
        const settled = await retryWithBackoff(() => deleteIfAllowed(api, name, options.check, options.signal, options.deadlineMs), {
          initialMs: 50,
          maxMs: 500,
          maxAttempts: 10,
          signal: options.signal,
          retryable: isRetryable,
        });
        const step: TeardownStep = { kind: api.kind, ...settled, ms: Math.round(performance.now() - started) };
        if (step.outcome === 'kept') options.logger.warn({ configuration: name, kind: api.kind, why: step.why }, 'left the webhook configuration as it is: it is not this process\'s to delete');
        return step;
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
