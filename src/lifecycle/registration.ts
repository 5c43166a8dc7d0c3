import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { KubeApi } from '../kube/client.js';
import { configurationApis, type ConfigurationApi } from '../kube/configuration-api.js';
import { desiredConfigurations, type DesiredConfigurations } from '../kube/desired-configurations.js';
import { LeaderElector } from '../kube/leader-election.js';
import { checkMatchConditionsSupported } from '../kube/match-conditions-gate.js';
import { OwnerClusterRole } from '../kube/owner.js';
import { ConfigurationReconciler } from '../kube/reconciler.js';
import { registerWebhookConfigurations, type PrepareConfiguration } from '../kube/register.js';
import type { RegistrationMetrics } from '../kube/registration-metrics.js';
import { RestoreTracker } from '../kube/restore-tracker.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../kube/request-deadline.js';
import { readServerVersion, type ServerVersion } from '../kube/server-version.js';
import { deleteWebhookConfigurations } from '../kube/teardown.js';
import { decideTeardown } from '../kube/teardown-decision.js';
import type { WebhookSpec } from '../policy/types.js';
import { deferred, type Deferred } from '../util/deferred.js';
import { ExclusiveTask } from '../util/exclusive-task.js';
import { CaBundleOverlap } from './ca-bundle-overlap.js';
import { PolicyOrder } from './policy-order.js';
import type { StepReport } from './shutdown.js';

export interface RegistrationInputs {
  caBundlePem: () => string;
  webhooks: () => readonly WebhookSpec[];
  excludedNamespaces: () => readonly string[];
  /** When the policy file in force was written; with it, a leader never registers an older policy than the live one (PolicyOrder). */
  policyModifiedAt?: () => Date;
}

/** Reading Pod -> ReplicaSet -> Deployment takes milliseconds on a healthy API; past this it keeps. */
const OWNER_CHAIN_DEADLINE_MS = 3000;

type Role = 'leader' | 'follower';

/**
 * Who registers, and when: the Lease holder registers at start, reconciles while it leads, and
 * on shutdown tears down what it registered when the teardown policy says so. Followers serve.
 * Each term of leadership runs as one task; a new term aborts the previous one and waits for it,
 * so losing and regaining the Lease never leaves two reconcilers writing.
 */
export class Registration {
  readonly #config: Config;
  readonly #api: KubeApi;
  readonly #apis: readonly ConfigurationApi[];
  readonly #logger: Logger;
  readonly #inputs: RegistrationInputs;
  readonly #elector: LeaderElector;
  readonly #owner: OwnerClusterRole | undefined;
  readonly #leadership: ExclusiveTask;
  readonly #caOverlap: CaBundleOverlap;
  /** What the desired configurations become against the live ones: the policy's order, then the CA overlap. */
  readonly #prepare: PrepareConfiguration;
  readonly #metrics: RegistrationMetrics | undefined;
  readonly #tracker: RestoreTracker;
  #reconciler: ConfigurationReconciler | undefined;
  /** Read once at start: what the configurations may use (matchConditions need 1.28). */
  #serverVersion: ServerVersion | undefined;
  #registeredByMe = false;

  constructor(config: Config, api: KubeApi, inputs: RegistrationInputs, logger: Logger, metrics?: RegistrationMetrics) {
    this.#config = config;
    this.#api = api;
    this.#apis = configurationApis(api);
    this.#inputs = inputs;
    this.#logger = logger.child({ component: 'registration' });
    this.#metrics = metrics;
    this.#tracker = new RestoreTracker(this.#logger, metrics);
    this.#caOverlap = new CaBundleOverlap(config.caOverlapMs);
    this.#caOverlap.onPruneDue(() => this.refresh('a CA kept for the overlap is due to leave the caBundle'));
    const policyOrder = inputs.policyModifiedAt && new PolicyOrder(inputs.policyModifiedAt, inputs.caBundlePem, this.#logger);
    this.#prepare = (desired, actual) => this.#caOverlap.prepare(policyOrder ? policyOrder.prepare(desired, actual) : desired, actual);
    this.#owner = config.ownerClusterRole ? new OwnerClusterRole(api, config.ownerClusterRole, this.#logger) : undefined;
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
    this.#elector.on('started-leading', () => this.#metrics?.setLeader(true));
    this.#elector.on('stopped-leading', () => this.#metrics?.setLeader(false));
    // Every API call of a term takes its signal and has its own deadline: a term outliving this
    // after its abort is a bug, logged; the next term starts anyway rather than leave no leader acting.
    this.#leadership = new ExclusiveTask({
      stopTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
      onStuck: (waitedMs) => this.#logger.error({ waitedMs }, 'the previous leadership term did not stop in time; starting the next one anyway'),
    });
  }

  /** Throws MatchConditionsUnsupportedError when the API server would drop matchConditions the policy uses. */
  desired(): DesiredConfigurations {
    checkMatchConditionsSupported(this.#inputs.webhooks(), this.#serverVersion);
    return desiredConfigurations({
      configName: this.#config.configName,
      serviceName: this.#config.serviceName,
      namespace: this.#config.namespace,
      caBundlePem: this.#inputs.caBundlePem(),
      webhooks: this.#inputs.webhooks(),
      excludedNamespaces: this.#inputs.excludedNamespaces(),
      ...(this.#owner ? { owner: this.#owner.reference } : {}),
    });
  }

  /**
   * Starts leader election; if this process leads from the first attempt it registers before
   * returning (so readiness means registered). Throws when registration fails for good.
   */
  async start(lifetime: AbortSignal): Promise<Role> {
    this.#serverVersion = await readServerVersion(this.#api, lifetime, this.#logger);
    this.#logger.info({ version: this.#serverVersion.gitVersion }, 'API server version');
    await this.#owner?.readAtStart(lifetime);
    void this.#elector.run(lifetime);
    const leading = await this.#elector.firstAttempt;
    // Leadership won later (a follower taking over) starts a term whose reconciler registers.
    this.#elector.on('started-leading', () => void this.#lead(lifetime));
    this.#elector.on('stopped-leading', () => void this.#leadership.stop());
    if (!leading) {
      this.#logger.info({ lease: this.#config.leaseName }, 'another replica leads; serving without registering');
      return 'follower';
    }
    const first = deferred<Role>();
    void this.#lead(lifetime, first);
    return await first.promise;
  }

  /** A new CA bundle or policy: the leader brings the configurations up to date. */
  refresh(reason: string): void {
    this.#reconciler?.trigger(reason);
  }

  /** Shutdown step 1: stop the leadership term (lease renewal stops with the lifetime signal). */
  stopBackground(): void {
    void this.#leadership.stop();
  }

  /**
   * Called at SIGTERM, before the shutdown delay: starts the teardown decision at once, while the
   * ServiceAccount surely still exists (an uninstall deletes it too), and returns shutdown step 3,
   * which acts on that decision. Undefined when this process registered nothing.
   */
  teardownStep(): ((signal: AbortSignal, budgetMs: number) => Promise<Omit<StepReport, 'ms' | 'step'>>) | undefined {
    if (!this.#registeredByMe) return undefined;
    const reading = new AbortController();
    const decision = decideTeardown(this.#config.teardown, {
      api: this.#api,
      namespace: this.#config.namespace,
      podName: this.#config.podName,
      inPod: this.#config.inPod,
      deadlineMs: Math.min(OWNER_CHAIN_DEADLINE_MS, Math.max(0, this.#config.shutdownTimeoutMs - 1000)),
      signal: reading.signal,
    });
    return async (signal, budgetMs) => {
      const stopReading = (): void => reading.abort(signal.reason);
      signal.addEventListener('abort', stopReading, { once: true });
      const { teardown, why } = await decision.finally(() => signal.removeEventListener('abort', stopReading));
      this.#logger.info({ teardown, why }, teardown ? 'deleting the webhook configurations' : 'keeping the webhook configurations');
      if (!teardown) return { outcome: 'skipped', detail: why };
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

  /**
   * One term of leadership, replacing (and first awaiting) the previous one. The first term of a
   * process that leads from the start registers before the reconciler starts and reports to
   * `first`: 'leader' once registered, 'follower' when the Lease was lost meanwhile (whoever
   * leads next registers), or the error that made registration fail for good.
   */
  #lead(lifetime: AbortSignal, first?: Deferred<Role>): Promise<void> {
    this.#registeredByMe = true;
    return this.#leadership.replace(async (signal) => {
      this.#tracker.startTerm();
      if (first && !(await this.#registerFirst(signal, lifetime, first))) return;
      await this.#reconcile(signal);
    }, lifetime);
  }

  async #registerFirst(signal: AbortSignal, lifetime: AbortSignal, first: Deferred<Role>): Promise<boolean> {
    try {
      const results = await registerWebhookConfigurations(this.#apis, this.desired(), {
        signal,
        logger: this.#logger,
        prepare: this.#prepare,
        onSettled: (kind, settled) => this.#tracker.observe(kind, settled),
      });
      this.#logger.info({ outcomes: { mutating: results.mutating.outcome, validating: results.validating.outcome } }, 'webhook configurations registered');
      first.resolve('leader');
      return true;
    } catch (error) {
      if (signal.aborted && !lifetime.aborted) {
        this.#logger.warn({ lease: this.#config.leaseName }, 'lost the Lease during the first registration; the leader registers');
        first.resolve('follower');
      } else {
        first.reject(error);
      }
      return false;
    }
  }

  async #reconcile(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const reconciler = new ConfigurationReconciler({
      apis: this.#apis,
      kubeConfig: this.#api.kubeConfig,
      configName: this.#config.configName,
      desired: async (passSignal) => {
        await this.#owner?.refresh(passSignal);
        return this.desired();
      },
      prepare: this.#prepare,
      resyncPeriodMs: this.#config.resyncPeriodMs,
      logger: this.#logger,
      tracker: this.#tracker,
      ...(this.#metrics ? { metrics: this.#metrics } : {}),
    });
    this.#reconciler = reconciler;
    reconciler.start(signal);
    await reconciler.stopped();
    this.#caOverlap.stop();
    if (this.#reconciler === reconciler) this.#reconciler = undefined;
  }
}
