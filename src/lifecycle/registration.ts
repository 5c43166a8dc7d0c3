import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { KubeApi } from '../kube/client.js';
import { configurationApis, type ConfigurationApi } from '../kube/configuration-api.js';
import { desiredConfigurations, type DesiredConfigurations } from '../kube/desired-configurations.js';
import { LeaderElector } from '../kube/leader-election.js';
import { readOwnerClusterRole } from '../kube/owner.js';
import { ConfigurationReconciler } from '../kube/reconciler.js';
import { registerWebhookConfigurations } from '../kube/register.js';
import { deleteWebhookConfigurations } from '../kube/teardown.js';
import { decideTeardown } from '../kube/teardown-decision.js';
import type { WebhookSpec } from '../policy/types.js';
import { CaBundleOverlap } from './ca-bundle-overlap.js';
import type { StepReport } from './shutdown.js';

export interface RegistrationInputs {
  caBundlePem: () => string;
  webhooks: () => readonly WebhookSpec[];
  excludedNamespaces: () => readonly string[];
}

/**
 * Who registers, and when: the Lease holder registers at start, reconciles while it leads, and
 * on shutdown tears down what it registered when the teardown policy says so. Followers serve.
 */
export class Registration {
  readonly #config: Config;
  readonly #api: KubeApi;
  readonly #apis: readonly ConfigurationApi[];
  readonly #logger: Logger;
  readonly #inputs: RegistrationInputs;
  readonly #elector: LeaderElector;
  readonly #caOverlap: CaBundleOverlap;
  #owner: { name: string; uid: string } | undefined;
  #reconcile: AbortController | undefined;
  #reconciler: ConfigurationReconciler | undefined;
  #registeredByMe = false;

  constructor(config: Config, api: KubeApi, inputs: RegistrationInputs, logger: Logger) {
    this.#config = config;
    this.#api = api;
    this.#apis = configurationApis(api);
    this.#inputs = inputs;
    this.#logger = logger.child({ component: 'registration' });
    this.#caOverlap = new CaBundleOverlap(config.caOverlapMs);
    this.#caOverlap.onPruneDue(() => this.refresh('a CA kept for the overlap is due to leave the caBundle'));
    this.#elector = new LeaderElector({
      api,
      namespace: config.namespace,
      leaseName: config.leaseName,
      identity: config.podName,
      leaseDurationMs: config.leaseDurationMs,
      renewDeadlineMs: config.leaseRenewDeadlineMs,
      retryPeriodMs: config.leaseRetryPeriodMs,
      logger: this.#logger,
    });
  }

  desired(): DesiredConfigurations {
    return desiredConfigurations({
      configName: this.#config.configName,
      serviceName: this.#config.serviceName,
      namespace: this.#config.namespace,
      caBundlePem: this.#inputs.caBundlePem(),
      webhooks: this.#inputs.webhooks(),
      excludedNamespaces: this.#inputs.excludedNamespaces(),
      ...(this.#owner ? { owner: this.#owner } : {}),
    });
  }

  /**
   * Starts leader election; if this process leads from the first attempt it registers before
   * returning (so readiness means registered). Throws when registration fails for good.
   */
  async start(lifetime: AbortSignal): Promise<'leader' | 'follower'> {
    if (this.#config.ownerClusterRole) this.#owner = await readOwnerClusterRole(this.#api, this.#config.ownerClusterRole, lifetime, this.#logger);
    // Leadership won later (a follower taking over) starts the reconciler, whose first pass registers.
    const onStartedLeading = (): void => this.#startReconciling(lifetime);
    void this.#elector.run(lifetime);
    const leading = await this.#elector.firstAttempt;
    this.#elector.on('started-leading', onStartedLeading);
    this.#elector.on('stopped-leading', () => this.#stopReconciling());
    if (!leading) {
      this.#logger.info({ lease: this.#config.leaseName }, 'another replica leads; serving without registering');
      return 'follower';
    }
    // Leading from the start: register before readiness, then keep the configurations as desired.
    this.#registeredByMe = true;
    await registerWebhookConfigurations(this.#apis, this.desired(), { signal: lifetime, logger: this.#logger, prepare: this.#caOverlap.prepare });
    if (this.#elector.isLeader()) this.#startReconciling(lifetime);
    return 'leader';
  }

  /** A new CA bundle or policy: the leader brings the configurations up to date. */
  refresh(reason: string): void {
    this.#reconciler?.trigger(reason);
  }

  /** Shutdown step 1: stop reconciling (lease renewal stops with the lifetime signal). */
  stopBackground(): void {
    this.#stopReconciling();
  }

  /** Shutdown step 3, when this process registered anything; undefined otherwise. */
  teardownStep(): ((signal: AbortSignal, budgetMs: number) => Promise<Omit<StepReport, 'ms' | 'step'>>) | undefined {
    if (!this.#registeredByMe) return undefined;
    return async (signal, budgetMs) => {
      const decision = await decideTeardown(this.#config.teardown, {
        api: this.#api,
        namespace: this.#config.namespace,
        podName: this.#config.podName,
        signal,
      });
      this.#logger.info(decision, decision.teardown ? 'deleting the webhook configurations' : 'keeping the webhook configurations');
      if (!decision.teardown) return { outcome: 'skipped', detail: decision.why };
      const steps = await deleteWebhookConfigurations(this.#apis, this.#config.configName, { signal, logger: this.#logger, deadlineMs: budgetMs });
      const detail = steps.map((s) => `${s.kind} ${s.outcome} ${s.ms}ms`).join(', ');
      if (steps.some((s) => s.outcome === 'timed-out')) return { outcome: 'timed-out', detail };
      return { outcome: steps.some((s) => s.outcome === 'failed') ? 'failed' : 'ok', detail };
    };
  }

  /** Alongside the server close: hand the Lease to a standby at once. */
  async releaseLease(signal: AbortSignal): Promise<Omit<StepReport, 'ms' | 'step'>> {
    const released = await this.#elector.release(signal);
    if (released === 'released') return { outcome: 'ok' };
    return released === 'not-held' ? { outcome: 'skipped', detail: 'not the leader' } : { outcome: 'failed', detail: 'see the log' };
  }

  #startReconciling(lifetime: AbortSignal): void {
    this.#registeredByMe = true;
    this.#reconcile = new AbortController();
    this.#reconciler = new ConfigurationReconciler({
      apis: this.#apis,
      kubeConfig: this.#api.kubeConfig,
      configName: this.#config.configName,
      desired: () => this.desired(),
      prepare: this.#caOverlap.prepare,
      resyncPeriodMs: this.#config.resyncPeriodMs,
      logger: this.#logger,
    });
    this.#reconciler.start(AbortSignal.any([lifetime, this.#reconcile.signal]));
  }

  #stopReconciling(): void {
    this.#caOverlap.stop();
    this.#reconcile?.abort();
    this.#reconciler = undefined;
  }
}
