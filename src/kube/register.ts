import type { Logger } from 'pino';
import { retryWithBackoff } from '../util/backoff.js';
import { formatApiFailure, isRetryable } from './api-errors.js';
import type { ConfigurationApi, ConfigurationKind, WebhookConfiguration } from './configuration-api.js';
import { configurationDiffers, mergeForUpdate } from './configuration-diff.js';
import type { DesiredConfigurations } from './desired-configurations.js';

export type RegisterOutcome = 'created' | 'updated' | 'unchanged';

/**
 * Completes the desired configuration from the live one just read (undefined: none yet): what to
 * register can depend on what is registered, e.g. CAs kept in the caBundle for an overlap.
 */
export type PrepareConfiguration = (desired: WebhookConfiguration, actual: WebhookConfiguration | undefined) => WebhookConfiguration;

export interface RegisterOptions {
  signal: AbortSignal;
  logger: Logger;
  prepare?: PrepareConfiguration;
  /** Attempts per configuration (conflicts, 5xx, no answer); default 8 (about 10 s of backoff). */
  maxAttempts?: number;
}

/**
 * Brings one configuration to `desired`: GET; 404 -> create; differs -> PUT with the
 * resourceVersion read; 409 -> read again and retry. Never delete-then-create: that would open a
 * window in which nothing is enforced.
 */
export async function ensureConfiguration(
  api: ConfigurationApi,
  desired: WebhookConfiguration,
  options: RegisterOptions,
): Promise<RegisterOutcome> {
  const name = desired.metadata?.name ?? '';
  return await retryWithBackoff(
    async () => {
      const actual = await api.read(name, options.signal);
      const wanted = options.prepare ? options.prepare(desired, actual) : desired;
      if (actual === undefined) {
        await api.create(wanted, options.signal);
        return 'created' as const;
      }
      if (!configurationDiffers(wanted, actual)) return 'unchanged' as const;
      await api.replace(mergeForUpdate(wanted, actual), options.signal);
      return 'updated' as const;
    },
    {
      initialMs: 100,
      maxMs: 2000,
      maxAttempts: options.maxAttempts ?? 8,
      signal: options.signal,
      retryable: isRetryable,
      onRetry: (error, attempt, delayMs) =>
        options.logger.warn({ configuration: name, kind: api.kind, attempt: attempt + 1, delayMs, error: formatApiFailure(error) }, 'registration attempt failed; retrying'),
    },
  );
}

/** Ensures both configurations at once; rejects with a message naming the one that failed. */
export async function registerWebhookConfigurations(
  apis: readonly ConfigurationApi[],
  desired: DesiredConfigurations,
  options: RegisterOptions,
): Promise<Record<ConfigurationKind, RegisterOutcome>> {
  const outcomes = await Promise.all(
    apis.map(async (api) => {
      try {
        return [api.kind, await ensureConfiguration(api, desired[api.kind], options)] as const;
      } catch (error) {
        throw new Error(`registering the ${api.kind} webhook configuration failed: ${formatApiFailure(error)}`, { cause: error });
      }
    }),
  );
  const result = Object.fromEntries(outcomes) as Record<ConfigurationKind, RegisterOutcome>;
  options.logger.info({ outcomes: result }, 'webhook configurations registered');
  return result;
}
