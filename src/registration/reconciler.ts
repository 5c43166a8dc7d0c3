import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { PendingTrigger } from '../util/pending-trigger.js';
import { retryAfterMs } from '../kube/api-errors.js';
import type { ConfigurationApi, ConfigurationKind } from './configuration-api.js';
import type { DesiredConfigurations } from './desired-configurations.js';
import { registerWebhookConfigurations, type PrepareConfiguration, type RegisterOptions, type RegisterResult, type RegistrationError } from './register.js';
import type { RegistrationMetrics } from './registration-metrics.js';
import { RestoreTracker } from './restore-tracker.js';
import { RevokedRights } from './revoked-rights.js';
import { watchEvents } from '../kube/watch-events.js';

export interface ReconcilerOptions {
  apis: readonly ConfigurationApi[];
  kubeConfig: KubeConfig;
  configName: string;
  /** Computed at every pass, so a new CA bundle, policy or owner ClusterRole uid is picked up. */
  desired: (signal: AbortSignal) => Promise<DesiredConfigurations>;
  /** This install: a configuration that calls another is never written (see RegisterOptions). */
  install: RegisterOptions['install'];
  /** Completes each desired configuration from the live one (see PrepareConfiguration). */
  prepare?: PrepareConfiguration;
  /** Each configuration's outcome in a pass, after the tracker saw it. */
  onSettled?: (kind: ConfigurationKind, settled: RegisterResult | RegistrationError) => void;
  /** Awaited before a configuration is created again (see RegisterOptions). */
  beforeCreate?: (signal: AbortSignal) => Promise<void>;
  resyncPeriodMs: number;
  logger: Logger;
  /** Tells restores from updates and logs each write; a new one (no history) by default. */
  tracker?: RestoreTracker;
  metrics?: RegistrationMetrics;
  /**
   * Objects kept beside the configurations (native entries' policies): `ensure` runs before the
   * configurations are written, `prune` after, and the watches trigger passes like theirs.
   */
  beside?: {
    ensure: (signal: AbortSignal, maxAttempts: number) => Promise<void>;
    prune: (signal: AbortSignal, maxAttempts: number) => Promise<void>;
    watches: ReadonlyArray<{ path: string; labelSelector: string; what: string }>;
  };
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
  readonly #revoked = new RevokedRights();
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
    const besideWatches = (this.#options.beside?.watches ?? []).map((watch) =>
      watchEvents({
        kubeConfig: this.#options.kubeConfig,
        path: watch.path,
        labelSelector: watch.labelSelector,
        what: watch.what,
        onEvent: (phase) => this.trigger(`${watch.what} ${phase}`),
        signal,
        logger: this.#options.logger,
      }),
    );
    this.#loop = Promise.all([this.#run(signal), ...watches, ...besideWatches]).then(() => undefined);
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
        this.#revoked.succeeded();
        continue;
      }
      const delayMs = Math.max(backoffDelay(failures++, FAILED_PASS_BACKOFF), retryAfterMs(failure) ?? 0);
      const level = this.#revoked.levelFor(failure);
      const message = level === 'warn' ? 'reconcile failed: no right to it any more (an uninstall removes the RBAC beside the Deployment); retrying' : 'reconcile failed; retrying';
      this.#options.logger[level]({ error: failure instanceof Error ? failure.message : String(failure), retryInMs: delayMs }, message);
      await sleep(delayMs, signal).catch(() => undefined);
      this.#passDue.fire();
    }
  }

  /** One pass; resolves with its failure (undefined when it succeeded or was stopped). */
  async #pass(signal: AbortSignal): Promise<unknown> {
    this.passes++;
    try {
      const desired = await this.#options.desired(signal);
      // A native object the API refuses must not hold the configurations back: the pass fails after them.
      const besideFailure = await this.#options.beside?.ensure(signal, 4).then(
        () => undefined,
        (error: unknown) => error ?? new Error('native objects failed'),
      );
      await registerWebhookConfigurations(this.#options.apis, desired, {
        signal,
        logger: this.#options.logger,
        install: this.#options.install,
        maxAttempts: 4,
        ...(this.#options.prepare ? { prepare: this.#options.prepare } : {}),
        ...(this.#options.beforeCreate ? { beforeCreate: this.#options.beforeCreate } : {}),
        onSettled: (kind, settled) => {
          if (!signal.aborted) this.#tracker.observe(kind, settled);
          this.#options.onSettled?.(kind, settled);
        },
      });
      if (besideFailure !== undefined) throw besideFailure;
      await this.#options.beside?.prune(signal, 4);
      return undefined;
    } catch (error) {
      if (signal.aborted) return undefined;
      this.#options.metrics?.reconcileFailed();
      return error;
    }
  }
}
