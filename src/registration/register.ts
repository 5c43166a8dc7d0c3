import type { Logger } from 'pino';
import { retryWithBackoff, type RetryOptions } from '../util/backoff.js';
import { formatApiFailure, isRetryable, retryAfterMs } from '../kube/api-errors.js';
import type { ConfigurationApi, ConfigurationKind, WebhookConfiguration } from './configuration-api.js';
import { describeChanges } from './configuration-changes.js';
import { configurationDiffers, mergeForUpdate } from './configuration-diff.js';
import { ConfigurationHeldElsewhere, heldElsewhere } from './configuration-holder.js';
import type { DesiredConfigurations } from './desired-configurations.js';
import type { RouteTarget } from './routed-paths.js';
import { isUnmanaged } from './unmanaged.js';

/** 'unmanaged': the live configuration carries the escape annotation and was left alone. */
export type RegisterOutcome = 'created' | 'updated' | 'unchanged' | 'unmanaged';

export interface RegisterResult {
  outcome: RegisterOutcome;
  /** What a create or update changed, one line per field (describeChanges); empty otherwise. */
  changes: string[];
  /** resourceVersion of the live configuration as read before any write (undefined: absent). */
  readVersion: string | undefined;
  /** resourceVersion after this call: the one written, or the one read when nothing was written. */
  version: string | undefined;
  /** uid of the live configuration after this call (undefined: absent, or a dry run's). */
  uid: string | undefined;
}

/**
 * Completes the desired configuration from the live one just read (undefined: none yet): what to
 * register can depend on what is registered, e.g. CAs kept in the caBundle for an overlap.
 */
export type PrepareConfiguration = (desired: WebhookConfiguration, actual: WebhookConfiguration | undefined) => WebhookConfiguration;

export interface RegisterOptions {
  signal: AbortSignal;
  logger: Logger;
  /** This install: a live configuration that calls another is never written (ConfigurationHeldElsewhere). */
  install: RouteTarget;
  /** The create or update sent with dryRun=All: kube-apiserver answers it as the real one (rights, validation) and stores nothing. */
  dryRun?: boolean;
  prepare?: PrepareConfiguration;
  /** Attempts per configuration (conflicts, 5xx, no answer); default 8 (about 10 s of backoff). */
  maxAttempts?: number;
  /** Awaited before a configuration is created (not before an update): see EndpointGate. */
  beforeCreate?: (signal: AbortSignal) => Promise<void>;
}

/** How a registered object's write is retried: conflicts, 5xx and no answer, 100 ms doubling to 2 s, Retry-After honoured. */
export function writeRetry(options: Pick<RegisterOptions, 'signal' | 'maxAttempts'>, onRetry: RetryOptions['onRetry']): RetryOptions {
  return { initialMs: 100, maxMs: 2000, maxAttempts: options.maxAttempts ?? 8, signal: options.signal, retryable: isRetryable, retryAfterMs, ...(onRetry ? { onRetry } : {}) };
}

const result = (outcome: RegisterOutcome, read: WebhookConfiguration | undefined, written?: WebhookConfiguration, changes: string[] = []): RegisterResult => ({
  outcome,
  changes,
  readVersion: read?.metadata?.resourceVersion,
  version: (written ?? read)?.metadata?.resourceVersion,
  uid: (written ?? read)?.metadata?.uid,
});

/**
 * Brings one configuration to `desired`: GET; 404 -> create (after `beforeCreate`); differs -> PUT
 * with the resourceVersion read; 409 -> read again and retry. Never delete-then-create: that would
 * open a window in which nothing is enforced. A configuration with the unmanaged annotation is
 * left alone; one that calls another install is not written at all and fails the call.
 */
export async function ensureConfiguration(api: ConfigurationApi, desired: WebhookConfiguration, options: RegisterOptions): Promise<RegisterResult> {
  const name = desired.metadata?.name ?? '';
  const settled = await retryWithBackoff(
    async () => {
      const actual = await api.read(name, options.signal);
      const elsewhere = actual && heldElsewhere(actual, options.install);
      // Returned, not thrown: it is an answer, which no retry changes.
      if (elsewhere) return new ConfigurationHeldElsewhere(api.kind, name, elsewhere);
      if (actual && isUnmanaged(actual)) return result('unmanaged', actual);
      if (actual === undefined && !options.dryRun) await options.beforeCreate?.(options.signal);
      const wanted = options.prepare ? options.prepare(desired, actual) : desired;
      if (actual === undefined) return result('created', actual, await api.create(wanted, options.signal, options.dryRun), describeChanges(wanted, undefined));
      if (!configurationDiffers(wanted, actual)) return result('unchanged', actual);
      const changes = describeChanges(wanted, actual);
      return result('updated', actual, await api.replace(mergeForUpdate(wanted, actual), options.signal, options.dryRun), changes);
    },
    writeRetry(options, (error, attempt, delayMs) =>
      options.logger.warn({ configuration: name, kind: api.kind, attempt: attempt + 1, delayMs, error: formatApiFailure(error) }, 'registration attempt failed; retrying'),
    ),
  );
  if (settled instanceof ConfigurationHeldElsewhere) throw settled;
  return settled;
}

/** A configuration that could not be brought to the desired state; `kind` names it. */
export class RegistrationError extends Error {
  constructor(
    readonly kind: ConfigurationKind,
    cause: unknown,
  ) {
    super(`registering the ${kind} webhook configuration failed: ${cause instanceof ConfigurationHeldElsewhere ? cause.message : formatApiFailure(cause)}`, { cause });
    this.name = 'RegistrationError';
  }
}

/**
 * Ensures both configurations at once. Rejects with the first RegistrationError (naming the kind
 * that failed) after both have settled, so `onSettled` sees every outcome, failures included.
 */
export async function registerWebhookConfigurations(
  apis: readonly ConfigurationApi[],
  desired: DesiredConfigurations,
  options: RegisterOptions & { onSettled?: (kind: ConfigurationKind, settled: RegisterResult | RegistrationError) => void },
): Promise<Record<ConfigurationKind, RegisterResult>> {
  const settled = await Promise.all(
    apis.map(async (api) => {
      const outcome = await ensureConfiguration(api, desired[api.kind], options).catch((error: unknown) => new RegistrationError(api.kind, error));
      options.onSettled?.(api.kind, outcome);
      return [api.kind, outcome] as const;
    }),
  );
  const failed = settled.find((entry): entry is readonly [ConfigurationKind, RegistrationError] => entry[1] instanceof RegistrationError);
  if (failed) throw failed[1];
  const results = Object.fromEntries(settled) as Record<ConfigurationKind, RegisterResult>;
  options.logger.debug({ outcomes: Object.fromEntries(settled.map(([kind, r]) => [kind, (r as RegisterResult).outcome])) }, 'webhook configurations registered');
  return results;
}
