import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { KubeApi } from '../kube/client.js';
import { configurationApis, type ConfigurationApi, type ConfigurationKind } from './configuration-api.js';
import { heldElsewhere } from './configuration-holder.js';
import { desiredConfigurations, type DesiredConfigurations } from './desired-configurations.js';
import { LeaderElector } from './leader-election.js';
import { SoleLeader } from './sole-leader.js';
import { MatchConditionsGate } from './match-conditions-gate.js';
import { InstallOwners } from './install-owners.js';
import { ensureSecretOwners, type OwnedSecret } from './owned-secret.js';
import { OwnerClusterRole } from './owner.js';
import { OwningDeployment } from './owning-deployment.js';
import type { ServerVersion } from '../kube/server-version.js';
import { ConfigurationReconciler } from './reconciler.js';
import { RegistrationError, registerWebhookConfigurations, type PrepareConfiguration, type RegisterResult } from './register.js';
import type { RegistrationMetrics } from './registration-metrics.js';
import { RestoreTracker } from './restore-tracker.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../kube/request-deadline.js';
import type { RouteTarget } from './routed-paths.js';
import { deleteWebhookConfigurations, type DeletionCheck } from './teardown.js';
import { decideTeardown } from './teardown-decision.js';
import type { PolicyEntry } from '../policy/policy.js';
import type { WebhookSpec } from '../admission/types.js';
import { serviceHostName } from '../tls/sans.js';
import { generatedSecretName } from '../tls/secret-api.js';
import { deferred, type Deferred } from '../util/deferred.js';
import { ExclusiveTask } from '../util/exclusive-task.js';
import { CaBundleOverlap } from './ca-bundle-overlap.js';
import { EndpointGate } from './endpoint-gate.js';
import { EntryCoverage, type EntryRef } from './entry-coverage.js';
import { LeaderReads } from './leader-reads.js';
import { NativeRegistration } from './native-registration.js';
import { PolicyOrder } from './policy-order.js';
import { recordEntryDefinitions } from './entry-definitions.js';
import { recordRemovedEntries } from './removed-entries.js';
import type { StepReport } from '../util/step-report.js';

export interface RegistrationInputs {
  caBundlePem: () => string;
  /** What the configurations register, the entries named in `leaveOut` (run natively) left out. */
  webhooks: (leaveOut: ReadonlySet<string>) => readonly WebhookSpec[];
  /** The policy's entries: those whose engine is native (or auto, where the cluster allows it) are registered as ValidatingAdmissionPolicies. */
  policyEntries?: () => readonly PolicyEntry[];
  /** The entries the registration routes to; with them, a new entry waits until every ready replica serves it (EntryCoverage). */
  entries?: () => readonly EntryRef[];
  /** The definitions of the entries this replica serves (`type/name` -> definition), recorded on the configurations. */
  entryDefinitions?: () => ReadonlyMap<string, string>;
  excludedNamespaces: () => readonly string[];
  /** The dev loop's `https://host:port` that the configurations route to instead of the Service. */
  urlBase?: string;
  /**
   * Once kube-apiserver's version is read (by a leader, before its first write); throwing fails
   * the start when that is the process's first registration, and is logged otherwise.
   */
  onServerVersion?: (version: ServerVersion) => void;
  /** When the policy file in force was written; with it, a leader never registers an older policy than the live one (PolicyOrder). */
  policyModifiedAt?: () => Date;
  /**
   * Lets this replica be Ready before its first registration: called before a configuration that
   * does not exist is created, which waits for a ready endpoint of the Service (EndpointGate).
   */
  serving?: () => void;
  /** Work only the leader does beside registering (the background audit): run for each term once registered, stopped with it; never rejects. */
  leading?: (signal: AbortSignal) => Promise<void>;
}

/** The Service port of the webhook as the shipped manifests and chart name it (a Service with one port needs no name). */
const WEBHOOK_PORT_NAME = 'https';

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
  readonly #elector: LeaderElector | SoleLeader;
  readonly #owner: OwnerClusterRole | undefined;
  readonly #leadership: ExclusiveTask;
  readonly #caOverlap: CaBundleOverlap;
  readonly #metrics: RegistrationMetrics | undefined;
  readonly #tracker: RestoreTracker;
  #reconciler: ConfigurationReconciler | undefined;
  /** Webhooks whose matchConditions the API server would drop keep their live entry (or stay out). */
  readonly #matchConditionsGate: MatchConditionsGate;
  /** What the desired configurations become against the live ones: the matchConditions gate, the policy's order, then the CA overlap. */
  readonly #prepare: PrepareConfiguration;
  readonly #leaderReads: LeaderReads;
  /** In a pod: holds a create back until the Service has a ready endpoint. */
  readonly #endpointGate: EndpointGate | undefined;
  /** In a pod: holds a new entry back until every ready replica serves it. */
  readonly #entryCoverage: EntryCoverage | undefined;
  /** In a pod: the Deployment that runs it, the second owner of the Lease and the generated Secret. */
  readonly #deployment: OwningDeployment | undefined;
  /** The owners the Lease and the generated Secret name, so that an uninstall garbage-collects them. */
  readonly #installOwners: InstallOwners;
  /** generate mode: the Secret with the CA key, which the leader gives the install's owner. */
  readonly #generatedSecret: OwnedSecret | undefined;
  /** The native entries' ValidatingAdmissionPolicies, bindings and params (when the policy is given). */
  readonly #native: NativeRegistration | undefined;
  #version: ServerVersion | undefined;
  /** This install, as its configurations call it: its Service, or the dev loop's URL. */
  readonly #install: RouteTarget;
  /** What this process created or updated itself: each kind's uid as the API answered the write. */
  readonly #written = new Map<ConfigurationKind, string>();

  constructor(config: Config, api: KubeApi, inputs: RegistrationInputs, logger: Logger, metrics?: RegistrationMetrics) {
    this.#config = config;
    this.#api = api;
    this.#apis = configurationApis(api);
    this.#inputs = inputs;
    this.#install = inputs.urlBase !== undefined ? { urlBase: inputs.urlBase } : { service: { name: config.serviceName, namespace: config.namespace } };
    this.#logger = logger.child({ component: 'registration' });
    this.#metrics = metrics;
    this.#tracker = new RestoreTracker(this.#logger, metrics);
    this.#caOverlap = new CaBundleOverlap(config.caOverlapMs);
    this.#caOverlap.onPruneDue(() => this.refresh('a CA kept for the overlap is due to leave the caBundle'));
    this.#matchConditionsGate = new MatchConditionsGate(this.#logger);
    this.#prepare = this.#preparation(config, inputs);
    this.#owner = config.ownerClusterRole ? new OwnerClusterRole(api, config.ownerClusterRole, this.#logger) : undefined;
    this.#deployment = config.inPod ? new OwningDeployment(api, { namespace: config.namespace, podName: config.podName }, this.#logger) : undefined;
    this.#installOwners = new InstallOwners(this.#owner, this.#deployment);
    this.#endpointGate = config.inPod
      ? new EndpointGate({ api, service: { namespace: config.namespace, name: config.serviceName }, serving: () => inputs.serving?.(), logger: this.#logger })
      : undefined;
    this.#entryCoverage = entryCoverage(config, api, inputs, this.#logger, metrics);
    // The dev loop keeps its generated material in --cert-dir: there is no Secret to own.
    this.#generatedSecret =
      config.tlsMode === 'generate' && !config.reachableAt ? { api, namespace: config.namespace, name: generatedSecretName(config.serviceName), logger: this.#logger } : undefined;
    this.#native = inputs.policyEntries && this.#nativeRegistration(inputs.policyEntries, metrics);
    this.#leaderReads = new LeaderReads({ api, owner: this.#owner, onVersion: (version, starting) => this.#onServerVersion(version, starting), logger: this.#logger });
    this.#elector = config.reachableAt ? new SoleLeader() : leaderElector(config, api, this.#installOwners, this.#logger);
    this.#elector.on('started-leading', () => this.#metrics?.setLeader(true));
    this.#elector.on('stopped-leading', () => this.#metrics?.setLeader(false));
    // Every API call of a term takes its signal and has its own deadline: a term outliving this
    // after its abort is a bug, logged; the next term starts anyway rather than leave no leader acting.
    this.#leadership = new ExclusiveTask({
      stopTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
      onStuck: (waitedMs) => this.#logger.error({ waitedMs }, 'the previous leadership term did not stop in time; starting the next one anyway'),
    });
  }

  /**
   * What a desired configuration goes through before it is written: the gate first (what this
   * kube-apiserver can take of this replica's policy), then the policy order (the live policy wins
   * when it is newer: its recorded digest is of what was registered), the entries the write drops
   * recorded, the definitions of what it routes and dropped, the CA overlap last.
   */
  #preparation(config: Config, inputs: RegistrationInputs): PrepareConfiguration {
    const policyOrder = inputs.policyModifiedAt && new PolicyOrder(inputs.policyModifiedAt, inputs.caBundlePem, this.#logger);
    const service = { name: config.serviceName, namespace: config.namespace };
    const recordRemoved = recordRemovedEntries(service, config.entryOverlapMs);
    const recordDefinitions = recordEntryDefinitions({
      service,
      own: inputs.entryDefinitions ?? (() => new Map()),
      ...(inputs.policyModifiedAt ? { policyModifiedAt: inputs.policyModifiedAt } : {}),
    });
    return (desired, actual) => {
      const gated = this.#matchConditionsGate.prepare(desired, actual);
      const recorded = recordRemoved(policyOrder ? policyOrder.prepare(gated, actual) : gated, actual);
      return this.#caOverlap.prepare(recordDefinitions(recorded, actual), actual);
    };
  }

  /** The native entries' ValidatingAdmissionPolicies, bindings and params. */
  #nativeRegistration(policyEntries: NonNullable<RegistrationInputs['policyEntries']>, metrics: RegistrationMetrics | undefined): NativeRegistration {
    return new NativeRegistration({
      api: this.#api,
      configName: this.#config.configName,
      namespace: this.#config.namespace,
      entries: policyEntries,
      excludedNamespaces: () => this.#inputs.excludedNamespaces(),
      owner: () => this.#owner?.reference,
      logger: this.#logger,
      ...(metrics ? { metrics } : {}),
    });
  }

  desired(): DesiredConfigurations {
    // One policy version per pass for the configurations and the native objects alike.
    this.#native?.freeze();
    return desiredConfigurations({
      configName: this.#config.configName,
      serviceName: this.#config.serviceName,
      namespace: this.#config.namespace,
      caBundlePem: this.#inputs.caBundlePem(),
      ...(this.#inputs.urlBase !== undefined ? { urlBase: this.#inputs.urlBase } : {}),
      webhooks: this.#inputs.webhooks(this.#native?.leaveOut() ?? new Set()),
      excludedNamespaces: this.#inputs.excludedNamespaces(),
      ...(this.#owner ? { owner: this.#owner.reference } : {}),
    });
  }

  /**
   * The start's check, by every replica before anything is written (the generated Secret, the
   * Lease, any object): what could refuse the first registration is asked now and nothing is
   * changed. The API server's version (the policy compiled for it), a refusal to read the owner
   * ClusterRole, the native support and the native objects' writes as dry runs, and both
   * configurations: read (one that another install holds refuses the start, named) and written
   * as dry runs (`dryRun=All`: kube-apiserver authorizes, admits and validates them as the real
   * writes). Throws what refuses the start; an API that does not answer is waited out.
   */
  async check(signal: AbortSignal): Promise<void> {
    await this.#leaderReads.check(signal);
    await this.#native?.check(signal, this.#version);
    await registerWebhookConfigurations(this.#apis, this.desired(), {
      signal,
      logger: this.#logger,
      install: this.#install,
      dryRun: true,
      maxAttempts: Number.POSITIVE_INFINITY,
      // What this kube-apiserver can take; the rest of the preparation only shapes the content.
      prepare: this.#matchConditionsGate.prepare,
    });
  }

  /**
   * Starts leader election and resolves once the API has answered the first Lease attempt (until
   * then the pod is up and not Ready; the elector retries every retry period). If this process
   * leads from that attempt it also registers before returning (so readiness means registered).
   * Throws when registration fails for good.
   */
  async start(lifetime: AbortSignal): Promise<Role> {
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
   * Called at SIGTERM (`requested`) or after a failed start: starts the teardown decision at once,
   * while the ServiceAccount surely still exists (an uninstall deletes it too), and returns the
   * teardown step, which acts on that decision; undefined when there is nothing this process may
   * delete. It deletes only this install's configurations (they call its Service), each as the
   * object it read (uid and resourceVersion as preconditions), and of those:
   * - at a requested stop in a pod with `--teardown auto` (on the owner chain's proof) or with
   *   `always`: any, also when another replica wrote them. The replicas of one install share them:
   *   when the Lease had just changed hands (a scale to zero right after a rollout), the one that
   *   wrote them may be gone already, and nobody else would delete configurations that now route
   *   to a Service without endpoints.
   * - otherwise (out of a pod, after a failed start): only one this process created or updated
   *   itself, that very object. A start that failed before its first write deletes nothing.
   */
  teardownStep(requested: boolean): ((signal: AbortSignal, budgetMs: number) => Promise<Omit<StepReport, 'ms' | 'step'>>) | undefined {
    const installWide = requested && (this.#config.teardown === 'always' || (this.#config.teardown === 'auto' && this.#config.inPod));
    const ownNative = this.#native?.wroteAny === true;
    if (!installWide && this.#written.size === 0 && !ownNative) return undefined;
    const reading = new AbortController();
    const decision = decideTeardown(this.#config.teardown, {
      api: this.#api,
      namespace: this.#config.namespace,
      podName: this.#config.podName,
      inPod: this.#config.inPod,
      deadlineMs: Math.min(OWNER_CHAIN_DEADLINE_MS, Math.max(0, this.#config.shutdownTimeoutMs - 1000)),
      signal: reading.signal,
    });
    const check: DeletionCheck = (kind, live) => {
      const elsewhere = heldElsewhere(live, this.#install);
      if (elsewhere) return `not this install's: ${elsewhere}`;
      if (installWide || live.metadata?.uid === this.#written.get(kind)) return undefined;
      return this.#written.has(kind) ? 'replaced since this process wrote it' : 'this process did not write it';
    };
    return async (signal, budgetMs) => {
      const stopReading = (): void => reading.abort(signal.reason);
      signal.addEventListener('abort', stopReading, { once: true });
      const { teardown, why, uninstalling } = await decision.finally(() => signal.removeEventListener('abort', stopReading));
      this.#logger.info({ teardown, why }, teardown ? 'deleting the webhook configurations' : 'keeping the webhook configurations');
      if (!teardown) return { outcome: 'skipped', detail: why };
      // The native objects go exactly when the configurations go, concurrently with them.
      const [steps, native] = await Promise.all([
        deleteWebhookConfigurations(this.#apis, this.#config.configName, { signal, logger: this.#logger, deadlineMs: budgetMs, uninstalling: uninstalling === true, check }),
        installWide || ownNative ? this.#native?.teardown(signal, uninstalling === true) : undefined,
      ]);
      const detail = [...steps.map((s) => `${s.kind} ${s.outcome} ${s.ms}ms`), ...(native && native.outcome !== 'absent' ? [native.detail] : [])].join(', ');
      if (steps.some((s) => s.outcome === 'timed-out') || (native?.outcome === 'failed' && signal.aborted)) return { outcome: 'timed-out', detail };
      if (steps.some((s) => s.outcome === 'failed') || native?.outcome === 'failed') return { outcome: 'failed', detail };
      if (steps.some((s) => s.outcome === 'forbidden')) return { outcome: 'skipped', detail: `${detail}: the install is being removed; garbage collection deletes them` };
      const deletedAny = steps.some((s) => s.outcome === 'deleted') || native?.outcome === 'deleted';
      if (!deletedAny && steps.some((s) => s.outcome === 'kept')) return { outcome: 'skipped', detail: `${detail}: nothing of this process's to delete` };
      return { outcome: 'ok', detail };
    };
  }

  /** A write of this process's leader (not a dry run): the object it created or updated is its own to delete. */
  #noteWritten(kind: ConfigurationKind, settled: RegisterResult | RegistrationError): void {
    if (!(settled instanceof RegistrationError) && (settled.outcome === 'created' || settled.outcome === 'updated') && settled.uid !== undefined) this.#written.set(kind, settled.uid);
  }

  /** Alongside the server close: hand the Lease to a standby at once. */
  async releaseLease(signal: AbortSignal): Promise<Omit<StepReport, 'ms' | 'step'>> {
    switch (await this.#elector.release(signal)) {
      case 'released':
        return { outcome: 'ok' };
      case 'not-held':
        return { outcome: 'skipped', detail: 'not the leader' };
      case 'gone':
        return { outcome: 'skipped', detail: 'the Lease is gone' };
      case 'revoked':
        return { outcome: 'skipped', detail: 'no right to release it any more: the install is being removed' };
      case 'failed':
        return { outcome: 'failed', detail: 'see the log' };
    }
  }

  /**
   * One term of leadership, replacing (and first awaiting) the previous one. The first term of a
   * process that leads from the start registers before the reconciler starts and reports to
   * `first`: 'leader' once registered, 'follower' when the Lease was lost meanwhile (whoever
   * leads next registers), or the error that made registration fail for good.
   */
  #lead(lifetime: AbortSignal, first?: Deferred<Role>): Promise<void> {
    return this.#leadership.replace(async (signal) => {
      this.#tracker.startTerm();
      try {
        if (!(await this.#readLeaderState(signal, lifetime, first))) return;
        if (first && !(await this.#registerFirst(signal, lifetime, first))) return;
        const beside = this.#inputs.leading?.(signal);
        await this.#reconcile(signal);
        await beside;
      } finally {
        // Before the next term starts (replace awaits this one): its gauges are its own.
        this.#tracker.endTerm();
        this.#native?.endTerm();
      }
    }, lifetime);
  }

  /**
   * The policy is compiled for this kube-apiserver from now on. Read by check(), in every replica
   * before its first write, a matchCondition it would refuse fails the start (an invalid
   * configuration, exit 2); read by a later term instead (a registration started without its
   * check), the term goes on and the matchConditions gate withholds those webhooks, logged as an error.
   */
  #onServerVersion(version: ServerVersion, starting: boolean): void {
    this.#version = version;
    this.#matchConditionsGate.setVersion(version);
    try {
      this.#inputs.onServerVersion?.(version);
    } catch (error) {
      if (starting) throw error;
      this.#logger.error({ error: error instanceof Error ? error.message : String(error) }, 'the policy in force has matchConditions this kube-apiserver refuses');
    }
  }

  /** The leader's reads before its first write; false when the term ended first (or, reported to `first`, they failed). */
  async #readLeaderState(signal: AbortSignal, lifetime: AbortSignal, first: Deferred<Role> | undefined): Promise<boolean> {
    try {
      await this.#leaderReads.ensure(signal, first !== undefined);
      await this.#native?.startTerm(signal, first !== undefined, this.#version);
      return true;
    } catch (error) {
      if (first && signal.aborted && !lifetime.aborted) {
        this.#logger.warn({ lease: this.#config.leaseName }, 'lost the Lease before the first registration; the leader registers');
        first.resolve('follower');
      } else if (first) {
        first.reject(error);
      }
      return false;
    }
  }

  async #registerFirst(signal: AbortSignal, lifetime: AbortSignal, first: Deferred<Role>): Promise<boolean> {
    try {
      await this.#entryCoverage?.beforeRegistering(signal);
      const desired = this.desired();
      // Native objects first: an entry moving off the webhook is enforced by one or the other throughout.
      await this.#native?.ensure(signal, Number.POSITIVE_INFINITY);
      const results = await registerWebhookConfigurations(this.#apis, desired, {
        signal,
        // Throttling and outages are waited out for as long as the term lasts (up, not Ready);
        // only what the API refuses (403, 422) fails the start.
        maxAttempts: Number.POSITIVE_INFINITY,
        logger: this.#logger,
        install: this.#install,
        prepare: this.#prepare,
        ...this.#beforeCreate(),
        onSettled: (kind, settled) => {
          this.#tracker.observe(kind, settled);
          this.#noteWritten(kind, settled);
        },
      });
      this.#logger.info({ outcomes: { mutating: results.mutating.outcome, validating: results.validating.outcome } }, 'webhook configurations registered');
      await this.#native?.prune(signal, Number.POSITIVE_INFINITY);
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

  #beforeCreate(): { beforeCreate?: (signal: AbortSignal) => Promise<void> } {
    const gate = this.#endpointGate;
    return gate ? { beforeCreate: (signal) => gate.beforeCreate(signal) } : {};
  }

  async #reconcile(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const native = this.#native;
    const reconciler = new ConfigurationReconciler({
      apis: this.#apis,
      kubeConfig: this.#api.kubeConfig,
      configName: this.#config.configName,
      desired: async (passSignal) => {
        await this.#owner?.refresh(passSignal);
        await this.#deployment?.refresh(passSignal);
        if (this.#generatedSecret) await ensureSecretOwners(this.#generatedSecret, this.#installOwners.current(), passSignal);
        await this.#entryCoverage?.beforeRegistering(passSignal);
        return this.desired();
      },
      install: this.#install,
      prepare: this.#prepare,
      ...this.#beforeCreate(),
      onSettled: (kind, settled) => this.#noteWritten(kind, settled),
      resyncPeriodMs: this.#config.resyncPeriodMs,
      logger: this.#logger,
      tracker: this.#tracker,
      ...(this.#metrics ? { metrics: this.#metrics } : {}),
      ...(native ? { beside: { ensure: (s: AbortSignal, attempts: number) => native.ensure(s, attempts), prune: (s: AbortSignal, attempts: number) => native.prune(s, attempts), watches: native.watches() } } : {}),
    });
    this.#reconciler = reconciler;
    reconciler.start(signal);
    await reconciler.stopped();
    this.#caOverlap.stop();
    if (this.#reconciler === reconciler) this.#reconciler = undefined;
  }
}

/** In a pod: holds a new entry back until every ready replica serves it. */
function entryCoverage(config: Config, api: KubeApi, inputs: RegistrationInputs, logger: Logger, metrics: RegistrationMetrics | undefined): EntryCoverage | undefined {
  const entries = inputs.entries;
  if (!config.inPod || config.reachableAt || !entries) return undefined;
  return new EntryCoverage({
    api,
    service: { namespace: config.namespace, name: config.serviceName },
    portName: WEBHOOK_PORT_NAME,
    serverName: serviceHostName(config.serviceName, config.namespace),
    caBundlePem: () => inputs.caBundlePem(),
    entries,
    onTimedOut: () => metrics?.entryCoverageTimedOut(),
    logger,
  });
}

function leaderElector(config: Config, api: KubeApi, owners: InstallOwners, logger: Logger): LeaderElector {
  return new LeaderElector({
    api,
    namespace: config.namespace,
    leaseName: config.leaseName,
    identity: config.podName,
    leaseDurationMs: config.leaseDurationMs,
    renewDeadlineMs: config.leaseRenewDeadlineMs,
    retryPeriodMs: config.leaseRetryPeriodMs,
    logger,
    owners,
  });
}
