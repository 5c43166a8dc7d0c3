import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { PendingTrigger } from '../util/pending-trigger.js';
import { retryAfterMs } from './api-errors.js';
import type { ConfigurationApi } from './configuration-api.js';
import type { DesiredConfigurations } from './desired-configurations.js';
import { registerWebhookConfigurations, type PrepareConfiguration } from './register.js';
import type { RegistrationMetrics } from './registration-metrics.js';
import { RestoreTracker } from './restore-tracker.js';
import { watchEvents } from './watch-events.js';

export interface ReconcilerOptions {
  apis: readonly ConfigurationApi[];
  kubeConfig: KubeConfig;
  configName: string;
  /** Computed at every pass, so a new CA bundle, policy or owner ClusterRole uid is picked up. */
  desired: (signal: AbortSignal) => Promise<DesiredConfigurations>;
  /** Completes each desired configuration from the live one (see PrepareConfiguration). */
  prepare?: PrepareConfiguration;
  resyncPeriodMs: number;
  logger: Logger;
  /** Tells restores from updates and logs each write; a new one (no history) by default. */
  tracker?: RestoreTracker;
  metrics?: RegistrationMetrics;
}

/** Waits between failed passes: 1 s doubling to 30 s, never shorter than the API's Retry-After. */
export const FAILED_PASS_BACKOFF = { initialMs: 1000, maxMs: 30_000 } as const;

/**
 * Keeps the registered configurations as desired: a watch on both (restored at once when someone
 * deletes or edits them) plus a periodic resync in case a watch event is lost. Passes never
 * overlap; triggers that arrive during a pass coalesce into one more pass. A failed pass is tried
 * again after a capped backoff that honours Retry-After (triggers meanwhile wait for it, so a
 * throttling API is not hammered), not only at the next trigger or resync.
 */
export class ConfigurationReconciler {
  readonly #options: ReconcilerOptions;
  readonly #passDue = new PendingTrigger();
  #loop: Promise<void> | undefined;
  readonly #tracker: RestoreTracker;
  passes = 0;

  constructor(options: ReconcilerOptions) {
    this.#options = options;
    this.#tracker = options.tracker ?? new RestoreTracker(options.logger, options.metrics);
  }

  /** Starts watching and reconciling until `signal` aborts. */
  start(signal: AbortSignal): void {
    const watches = this.#options.apis.map((api) =>
      watchEvents({
        kubeConfig: this.#options.kubeConfig,
        path: api.collectionPath,
        name: this.#options.configName,
        what: `${api.kind} configuration`,
        onEvent: (phase) => this.trigger(`${api.kind} configuration ${phase}`),
        signal,
        logger: this.#options.logger,
      }),
    );
    this.#loop = Promise.all([this.#run(signal), ...watches]).then(() => undefined);
  }

  /** Asks for a pass soon (a CA rotation, a policy change, a watch event). */
  trigger(reason: string): void {
    this.#options.logger.debug({ reason }, 'reconcile requested');
    this.#passDue.fire();
  }

  /** Resolves when the loop and the watches have stopped after the signal aborted. */
  async stopped(): Promise<void> {
    await this.#loop;
  }

  async #run(signal: AbortSignal): Promise<void> {
    for (let failures = 0; !signal.aborted; ) {
      await this.#passDue.take(this.#options.resyncPeriodMs, signal);
      if (signal.aborted) break;
      const failure = await this.#pass(signal);
      if (failure === undefined) {
        failures = 0;
        continue;
      }
      const delayMs = Math.max(backoffDelay(failures++, FAILED_PASS_BACKOFF), retryAfterMs(failure) ?? 0);
      this.#options.logger.error({ error: failure instanceof Error ? failure.message : String(failure), retryInMs: delayMs }, 'reconcile failed; retrying');
      await sleep(delayMs, signal).catch(() => undefined);
      this.#passDue.fire();
    }
  }

  /** One pass; resolves with its failure (undefined when it succeeded or was stopped). */
  async #pass(signal: AbortSignal): Promise<unknown> {
    this.passes++;
    try {
      await registerWebhookConfigurations(this.#options.apis, await this.#options.desired(signal), {
        signal,
        logger: this.#options.logger,
        maxAttempts: 4,
        ...(this.#options.prepare ? { prepare: this.#options.prepare } : {}),
        onSettled: (kind, settled) => {
          if (!signal.aborted) this.#tracker.observe(kind, settled);
        },
      });
      return undefined;
    } catch (error) {
      if (signal.aborted) return undefined;
      this.#options.metrics?.reconcileFailed();
      return error;
    }
  }
}
