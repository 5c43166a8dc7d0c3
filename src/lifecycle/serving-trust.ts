import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { caBundlesOf } from '../registration/live-ca-bundles.js';
import type { LiveSnapshot } from '../registration/live-configurations.js';
import type { ServingMaterial } from '../tls/types.js';
import { backoffDelay } from '../util/backoff.js';
import { PendingTrigger } from '../util/pending-trigger.js';
import { ALWAYS, TrustTimeline } from './trust-timeline.js';

/** What ServingTrust reads of LiveConfigurations. */
export interface LiveSource {
  readonly snapshot: LiveSnapshot | undefined;
  on(event: 'change', listener: () => void): unknown;
  off(event: 'change', listener: () => void): unknown;
}

export interface ServingTrustOptions {
  /** Puts material on the listener (new connections get it). */
  serve: (material: ServingMaterial) => void;
  /** Verifies the listener's TLS against each bundle as kube-apiserver would; rejects saying why not. */
  verify: (bundlePems: readonly string[], signal: AbortSignal) => Promise<void>;
  /** How long a change of the configurations may take to reach every kube-apiserver (PROPAGATION_GRACE_MS). */
  graceMs: number;
  logger: Logger;
  /** Monotonic milliseconds (performance.now by default). */
  now?: () => number;
  /** Wall-clock milliseconds, for certificate validity (Date.now by default). */
  wallClock?: () => number;
}

/**
 * A held certificate is given up this long before it expires, even if its successor is not
 * trusted yet: kube-apiserver's clock may run ahead of this one, and an expired chain fails anyway.
 */
export const HOLD_MARGIN_MS = 5 * 60 * 1000;

/** Between failed readiness handshakes: 0.5 s doubling to 10 s. */
const VERIFY_BACKOFF = { initialMs: 500, maxMs: 10_000 } as const;

/** Longest single wait of the loop; it wakes at least this often to look at the clocks again. */
const MAX_WAIT_MS = 60_000;

const distinct = (bundles: readonly string[]): string[] => [...new Set(bundles)];

/**
 * What the listener serves and whether this replica is Ready, both decided by what kube-apiserver
 * can verify: the caBundles of the live configurations (LiveConfigurations), not this process's own.
 *
 * - Ready means every live caBundle has trusted the served chain for the propagation grace (a
 *   kube-apiserver whose cache lags still holds the bundle from before) and a TLS handshake with
 *   each bundle succeeds. While nothing is registered the own bundle stands in (nothing calls).
 *   The grace counts from when this process first saw the bundle, or from earlier when the API
 *   shows the configurations unwritten for longer (LiveSnapshot.unchangedSince): a restart finding
 *   its CA in place long since is Ready without waiting.
 * - New material (a renewal, a new CA from the Secret or the mounted files) is served at once when
 *   its chain is trusted that way; otherwise the previous certificate stays on the listener until it
 *   is (the leader is pushing the new CA meanwhile), or until the previous one is about to expire.
 * Without live configurations (no cluster, --no-register) everything is served and Ready at once.
 */
export class ServingTrust extends EventEmitter<{ readiness: [ready: boolean] }> {
  readonly #options: ServingTrustOptions;
  readonly #now: () => number;
  readonly #wallClock: () => number;
  readonly #timeline = new TrustTimeline();
  readonly #due = new PendingTrigger();
  #live: LiveSource | undefined;
  #snapshot: LiveSnapshot | undefined;
  #served: ServingMaterial;
  #pending: { material: ServingMaterial; offeredAt: number; held: boolean } | undefined;
  #ready = false;
  #reason = 'starting';
  /** What the last successful handshakes verified (served certificate + bundles); a change verifies again. */
  #verified: string | undefined;
  #verifyFailures = 0;

  constructor(options: ServingTrustOptions, initial: ServingMaterial) {
    super();
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#wallClock = options.wallClock ?? Date.now;
    this.#served = initial;
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** The material on the listener now. */
  get served(): ServingMaterial {
    return this.#served;
  }

  /** Follows `live` (undefined: nothing is registered from this process) until `signal` aborts. */
  async run(live: LiveSource | undefined, signal: AbortSignal): Promise<void> {
    this.#live = live;
    const onChange = (): void => this.#due.fire();
    live?.on('change', onChange);
    try {
      while (!signal.aborted) {
        const wakeAt = await this.#round(signal);
        await this.#due.take(Math.min(MAX_WAIT_MS, Math.max(0, wakeAt - this.#now())), signal);
      }
    } finally {
      live?.off('change', onChange);
    }
  }

  /** New material from the source: served once kube-apiserver can verify it (see the class comment). */
  offer(next: ServingMaterial): void {
    this.#pending = { material: next, offeredAt: this.#now(), held: false };
    this.#due.fire();
  }

  /** Resolves once Ready; rejects when `signal` aborts first. */
  async untilReady(signal: AbortSignal): Promise<void> {
    if (this.#ready) return;
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.off('readiness', onReadiness);
        reject(signal.reason as Error);
      };
      const onReadiness = (ready: boolean): void => {
        if (!ready) return;
        this.off('readiness', onReadiness);
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.on('readiness', onReadiness);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** One look at everything; returns when the next look is due without an event. */
  async #round(signal: AbortSignal): Promise<number> {
    const now = this.#now();
    const snapshot = this.#live?.snapshot;
    if (snapshot && snapshot !== this.#snapshot) {
      this.#snapshot = snapshot;
      this.#timeline.update(caBundlesOf([snapshot.mutating, snapshot.validating]), now, snapshot.unchangedSince);
    }
    const pendingDue = this.#decidePending(now);
    const readyDue = await this.#decideReadiness(now, signal);
    return Math.min(pendingDue, readyDue);
  }

  #trustedSince(material: ServingMaterial): number | undefined {
    return this.#live ? this.#timeline.trustedSince(material) : ALWAYS;
  }

  /** Serves the pending material when it is trusted (or the held one expires); returns when to look again. */
  #decidePending(now: number): number {
    const pending = this.#pending;
    if (!pending) return Number.POSITIVE_INFINITY;
    const since = this.#trustedSince(pending.material);
    const settledAt = since === undefined ? Number.POSITIVE_INFINITY : since + this.#options.graceMs;
    const heldExpiresIn = this.#served.certNotAfter.getTime() - HOLD_MARGIN_MS - this.#wallClock();
    const details = { waitedMs: Math.round(now - pending.offeredAt), certNotAfter: pending.material.certNotAfter };
    if (settledAt <= now) {
      this.#swap(pending.material);
      if (pending.held) this.#options.logger.info(details, 'serving the new certificate: every live caBundle trusts its CA');
      return Number.POSITIVE_INFINITY;
    }
    if (heldExpiresIn <= 0) {
      const previousNotAfter = this.#served.certNotAfter;
      this.#swap(pending.material);
      this.#options.logger.warn(
        { ...details, previousNotAfter },
        'serving the new certificate although the live caBundles do not trust its CA yet: the previous one is about to expire',
      );
      return Number.POSITIVE_INFINITY;
    }
    if (!pending.held) {
      pending.held = true;
      const why = since === undefined ? 'the live caBundles do not trust its CA yet' : 'the live caBundles trust its CA only since moments ago';
      this.#options.logger.info(details, `new certificate held: ${why}; serving the previous one meanwhile`);
    }
    return Math.min(settledAt, now + heldExpiresIn);
  }

  #swap(material: ServingMaterial): void {
    this.#pending = undefined;
    this.#served = material;
    this.#options.serve(material);
  }

  /** Decides readiness for the served material; returns when to look again. */
  async #decideReadiness(now: number, signal: AbortSignal): Promise<number> {
    const since = this.#trustedSince(this.#served);
    if (since === undefined) {
      this.#setReady(false, this.#timeline.known || !this.#live ? 'the live caBundles do not trust the served certificate' : 'the live webhook configurations have not been read yet');
      return Number.POSITIVE_INFINITY;
    }
    const settledAt = since + this.#options.graceMs;
    if (settledAt > now) {
      this.#setReady(false, 'the live caBundles trust the served certificate only since moments ago; waiting for every kube-apiserver to see them', { waitMs: Math.round(settledAt - now) });
      return settledAt;
    }
    const bundles = this.#timeline.registered ? distinct(caBundlesOf([this.#snapshot?.mutating, this.#snapshot?.validating])) : [this.#served.caBundlePem];
    const key = JSON.stringify([this.#served.certPem, bundles]);
    if (this.#ready && this.#verified === key) return Number.POSITIVE_INFINITY;
    try {
      await this.#options.verify(bundles, signal);
      this.#verified = key;
      this.#verifyFailures = 0;
      // How long the live bundles have trusted it: since before this process saw them when the API shows them unchanged that long.
      this.#setReady(true, 'kube-apiserver can verify the served certificate', Number.isFinite(since) ? { trustedForMs: Math.round(now - since) } : {});
      return Number.POSITIVE_INFINITY;
    } catch (error) {
      if (signal.aborted) return Number.POSITIVE_INFINITY;
      this.#verified = undefined;
      this.#setReady(false, `a TLS handshake with the live caBundle failed: ${error instanceof Error ? error.message : String(error)}`);
      return now + backoffDelay(this.#verifyFailures++, VERIFY_BACKOFF);
    }
  }

  #setReady(ready: boolean, reason: string, details: Record<string, number> = {}): void {
    if (ready === this.#ready && reason === this.#reason) return;
    const changed = ready !== this.#ready;
    this.#ready = ready;
    this.#reason = reason;
    if (ready) this.#options.logger.info({ reason, ...details }, 'trusted by the live webhook configurations');
    else this.#options.logger[changed ? 'warn' : 'info']({ reason, ...details }, 'not trusted by the live webhook configurations yet; not ready');
    if (changed) this.emit('readiness', ready);
  }
}
