import { EventEmitter } from 'node:events';
import type { V1Lease } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { sleep } from '../util/abort.js';
import { backoffDelay, retryWithBackoff } from '../util/backoff.js';
import { formatApiFailure, isConflict, isForbidden, isNotFound, isRetryable, retryAfterMs } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { namesEvery, ownersKey, withOwners, type OwnerSource } from './install-owners.js';
import { callApi } from '../kube/request-deadline.js';

export interface LeaderElectionOptions {
  api: KubeApi;
  namespace: string;
  leaseName: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  logger: Logger;
  /**
   * The install's owners, so that deleting the install garbage-collects the Lease: a create names
   * them, a renewal adds them when they changed since this process last wrote them (not at every
   * renewal: a uid gone stale would be added back as often as the collector drops it).
   */
  owners?: OwnerSource;
  /** Injectable for tests. */
  now?: () => number;
}

/** Between release attempts at shutdown: the step's deadline bounds them all. */
const RELEASE_BACKOFF = { initialMs: 200, maxMs: 1000 } as const;

const toMs = (time: Date | string | undefined): number => (time === undefined ? 0 : new Date(time).getTime());

/**
 * Leader election on a coordination.k8s.io Lease, the way client-go does it: acquire when the
 * holder has not renewed within the lease duration (measured on the local clock from when the
 * record was last seen to change, so clock skew between nodes does not matter), renew every
 * retry period, step down at the renew deadline (mid-request if need be), release on stop.
 */
export class LeaderElector extends EventEmitter<{ 'started-leading': []; 'stopped-leading': [] }> {
  #leading = false;
  #everLed = false;
  #observed: { record: string; atMs: number } | undefined;
  /** ownersKey of the owners this process last wrote onto the Lease. */
  #ownersWritten: string | undefined;
  /** Armed at every successful renewal; aborts the attempt in flight and steps down at the renew deadline. */
  #renewal: { signal: AbortSignal; timer: NodeJS.Timeout } | undefined;
  readonly #options: LeaderElectionOptions;
  readonly #now: () => number;
  #settleFirstAttempt: (leading: boolean) => void = () => undefined;
  /**
   * Settles after the first acquire attempt the API answered (true: this process leads from the
   * start), or false when run() stops first. Attempts that got no answer (an apiserver restarting
   * during a control-plane upgrade, a 5xx) are retried every retry period meanwhile.
   */
  readonly firstAttempt = new Promise<boolean>((resolve) => (this.#settleFirstAttempt = resolve));

  constructor(options: LeaderElectionOptions) {
    super();
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /** Runs until `signal` aborts; never rejects. Call release() afterwards to hand over at once. */
  async run(signal: AbortSignal): Promise<void> {
    const retry = { initialMs: this.#options.retryPeriodMs, maxMs: this.#options.retryPeriodMs, jitter: 0.1 };
    while (!signal.aborted) {
      const outcome = await this.#attempt(signal);
      if (outcome === 'holds' && !this.#leading) this.#setLeading(true);
      if (outcome !== 'no-answer') this.#settleFirstAttempt(this.#leading);
      await sleep(backoffDelay(0, retry), signal).catch(() => undefined);
    }
    this.#clearRenewDeadline();
    this.#settleFirstAttempt(false);
  }

  /**
   * One acquire or renew attempt. While leading it is cut at the renew deadline, whatever request
   * is in flight: a slow or hanging PUT must not keep a leader acting past it.
   */
  async #attempt(signal: AbortSignal): Promise<'holds' | 'held-elsewhere' | 'no-answer'> {
    const attemptSignal = this.#leading && this.#renewal ? AbortSignal.any([signal, this.#renewal.signal]) : signal;
    const startedMs = performance.now();
    try {
      const ok = await this.#tryAcquireOrRenew(attemptSignal);
      if (ok) this.#armRenewDeadline(startedMs);
      return ok ? 'holds' : 'held-elsewhere';
    } catch (error) {
      if (!attemptSignal.aborted) this.#options.logger.warn({ lease: this.#options.leaseName, error: formatApiFailure(error) }, 'lease update failed');
      // A refusal (403: RBAC) is an answer: this process cannot lead, but it can serve.
      return isRetryable(error) ? 'no-answer' : 'held-elsewhere';
    }
  }

  /**
   * client-go's renew loop as a whole: renewals are retried every retry period until the renew
   * deadline has passed since the last successful one (counted from before its GET, as the
   * record's renewTime is), then the leader steps down, before a standby may take the Lease (the
   * lease duration, which config requires to be longer).
   */
  #armRenewDeadline(renewStartedMs: number): void {
    this.#clearRenewDeadline();
    const renewal = new AbortController();
    const timer = setTimeout(() => {
      renewal.abort(new DOMException(`no renewal within the renew deadline (${this.#options.renewDeadlineMs} ms)`, 'TimeoutError'));
      if (!this.#leading) return;
      this.#options.logger.warn({ lease: this.#options.leaseName, renewDeadlineMs: this.#options.renewDeadlineMs }, 'could not renew the Lease within the renew deadline; stepping down');
      this.#setLeading(false);
    }, Math.max(0, renewStartedMs + this.#options.renewDeadlineMs - performance.now()));
    timer.unref();
    this.#renewal = { signal: renewal.signal, timer };
  }

  #clearRenewDeadline(): void {
    if (this.#renewal) clearTimeout(this.#renewal.timer);
    this.#renewal = undefined;
  }

  /**
   * Gives the Lease up so a standby takes over at once instead of after the lease duration. Also
   * after stepping down on failed renewals: the record may still name this process, and a standby
   * would otherwise wait it out. A 5xx, a 429, a conflict or no answer is retried (capped backoff,
   * never sooner than the API's Retry-After) until `signal` ends the shutdown step: a throttled or
   * restarting API must not leave the Lease to expire when a moment later it could be handed over.
   */
  async release(signal: AbortSignal): Promise<'released' | 'not-held' | 'gone' | 'revoked' | 'failed'> {
    if (!this.#leading && !this.#everLed) return 'not-held';
    this.#clearRenewDeadline();
    if (this.#leading) this.#setLeading(false);
    const { leaseName } = this.#options;
    try {
      const outcome = await retryWithBackoff(() => this.#releaseOnce(signal), {
        ...RELEASE_BACKOFF,
        maxAttempts: Number.POSITIVE_INFINITY,
        signal,
        retryable: (error) => !signal.aborted && isRetryable(error),
        retryAfterMs,
        onRetry: (error, attempt, delayMs) =>
          this.#options.logger.warn({ lease: leaseName, attempt: attempt + 1, delayMs, error: formatApiFailure(error) }, 'releasing the leader lease failed; retrying'),
      });
      if (outcome === 'released') this.#options.logger.info({ lease: leaseName }, 'leader lease released');
      return outcome;
    } catch (error) {
      if (isNotFound(error)) {
        this.#options.logger.info({ lease: leaseName }, 'the leader lease is gone (collected with the install): nothing to release');
        return 'gone';
      }
      if (isForbidden(error)) {
        // This process renewed it until now: the right was taken away, as an uninstall does.
        this.#options.logger.info({ lease: leaseName, error: formatApiFailure(error) }, 'no right to release the leader lease any more (an uninstall removed the Role); it expires on its own');
        return 'revoked';
      }
      this.#options.logger.warn({ lease: leaseName, error: formatApiFailure(error) }, 'releasing the leader lease failed; it expires on its own');
      return 'failed';
    }
  }

  /** One read and write of the release; a conflict (renewed or taken meanwhile) is read again. */
  async #releaseOnce(signal: AbortSignal): Promise<'released' | 'not-held'> {
    const { api, namespace, leaseName, identity } = this.#options;
    const lease = await callApi(signal, (o) => api.coordination.readNamespacedLease({ name: leaseName, namespace }, o));
    if (lease.spec?.holderIdentity !== identity) return 'not-held';
    const now = new Date(this.#now());
    lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now };
    await callApi(signal, (o) => api.coordination.replaceNamespacedLease({ name: leaseName, namespace, body: lease }, o));
    return 'released';
  }

  #setLeading(leading: boolean): void {
    this.#leading = leading;
    if (leading) this.#everLed = true;
    this.#options.logger.info({ lease: this.#options.leaseName, identity: this.#options.identity }, leading ? 'became the leader' : 'stopped being the leader');
    this.emit(leading ? 'started-leading' : 'stopped-leading');
  }

  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { api, namespace, leaseName, identity, leaseDurationMs } = this.#options;
    const timeoutMs = Math.min(this.#options.renewDeadlineMs, 5000);
    const now = this.#now();
    let lease: V1Lease;
    try {
      lease = await callApi(signal, (o) => api.coordination.readNamespacedLease({ name: leaseName, namespace }, o), timeoutMs);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return await this.#create(signal, timeoutMs);
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity}|${toMs(spec.renewTime)}|${spec.leaseDurationSeconds}`;
    if (this.#observed?.record !== record) this.#observed = { record, atMs: now };
    const heldByOther = spec.holderIdentity !== undefined && spec.holderIdentity !== '' && spec.holderIdentity !== identity;
    const expiresAt = this.#observed.atMs + (spec.leaseDurationSeconds ?? 0) * 1000;
    if (heldByOther && now < expiresAt) return false;
    const nowDate = new Date(now);
    const owners = this.#options.owners?.current() ?? [];
    if (ownersKey(owners) !== this.#ownersWritten && !namesEvery(lease.metadata?.ownerReferences, owners)) {
      lease.metadata = { ...lease.metadata, ownerReferences: withOwners(lease.metadata?.ownerReferences, owners) };
    }
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      renewTime: nowDate,
      ...(spec.holderIdentity === identity ? {} : { acquireTime: nowDate, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
    };
    try {
      await callApi(signal, (o) => api.coordination.replaceNamespacedLease({ name: leaseName, namespace, body: lease }, o), timeoutMs);
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
    this.#ownersWritten = ownersKey(owners);
    return true;
  }

  async #create(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    const { api, namespace, leaseName, identity, leaseDurationMs } = this.#options;
    const now = new Date(this.#now());
    const owners = this.#options.owners?.forCreate() ?? [];
    const body: V1Lease = {
      metadata: { name: leaseName, namespace, ...(owners.length > 0 ? { ownerReferences: [...owners] } : {}) },
      spec: { holderIdentity: identity, leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000), acquireTime: now, renewTime: now, leaseTransitions: 0 },
    };
    try {
      await callApi(signal, (o) => api.coordination.createNamespacedLease({ namespace, body }, o), timeoutMs);
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
    this.#ownersWritten = ownersKey(this.#options.owners?.current() ?? []);
    return true;
  }
}
