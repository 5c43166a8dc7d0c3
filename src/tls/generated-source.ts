/**
 * Generate mode: produces, persists, shares and renews the CA and serving certificate, and
 * announces every change (bundle first, then the serving material that may depend on it).
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { deadlineSignal, isAbortError, sleep } from '../util/abort.js';
import { retryWithBackoff } from '../util/backoff.js';
import { caConfirmationRule, type CaConfirmation } from './ca-confirmation.js';
import { servingMaterialOf, type GeneratedMaterial } from './generated-material.js';
import { generateRsaKey, type KeyGenerator } from './keys.js';
import type { MaterialStore } from './material-store.js';
import type { TlsMetrics } from './metrics.js';
import { parseCertificates } from './pem.js';
import { SecretApiError } from './secret-api.js';
import { renewalPolicyProblems, renewMaterial, type RenewalPolicy } from './renewal.js';
import type { ServingMaterial, TlsMaterialEvents, TlsMaterialSource } from './types.js';

export interface GeneratedSourceOptions {
  store: MaterialStore;
  policy: RenewalPolicy;
  /** When a next CA counts as trusted by callers, so that the leaf may move to it. */
  confirmation: CaConfirmation;
  /** Interval of the renewal checks after start(). */
  checkIntervalMs: number;
  /** Bound on one check (Secret reads/writes and key generation included). */
  checkTimeoutMs: number;
  now: () => Date;
  generateKey?: KeyGenerator;
  logger: Logger;
  metrics: TlsMetrics;
}

/** A concurrent writer got there first: read again and decide on what it wrote. */
class LostRace extends Error {
  override readonly name = 'LostRace';
}

/**
 * Between start attempts: quick after a blip, every 10 s through a long outage, never sooner than
 * the API's Retry-After. The pod has nothing to serve without its material, so it waits (up, not
 * Ready) for as long as it lives: an API that sheds load or restarts is no reason to exit.
 */
const START_BACKOFF = { initialMs: 500, maxMs: 10_000 } as const;

/** What the API asked to wait before the next attempt, when it asked. */
const retryAfterOf = (error: unknown): number | undefined => (error instanceof SecretApiError ? error.retryAfterMs : undefined);

/**
 * A failure another attempt may get past: no answer, throttled, a server error, a race lost, or a
 * check cut at its deadline. Everything else (a refusal, a Secret that is not ours) is final.
 */
function isTransient(error: unknown): boolean {
  if (error instanceof SecretApiError) return error.transient;
  return error instanceof LostRace || (error instanceof Error && error.name === 'TimeoutError');
}

export class GeneratedMaterialSource extends EventEmitter<TlsMaterialEvents> implements TlsMaterialSource {
  private material: GeneratedMaterial | undefined;
  private serving: ServingMaterial | undefined;
  private loop: { controller: AbortController; done: Promise<void> } | undefined;
  private readonly generateKey: KeyGenerator;
  /** Checks run one at a time (timer and direct calls alike). */
  private checks: Promise<void> = Promise.resolve();
  /** Until persist(): a check serves what it would write without writing it. */
  private holdWrites = false;
  /** Why the material served was not written yet (held back by load()), until it is. */
  private heldBack: string[] | undefined;

  constructor(private readonly options: GeneratedSourceOptions) {
    super();
    const problems = renewalPolicyProblems(options.policy);
    if (problems.length > 0) throw new Error(`certificate lifetimes: ${problems.join('; ')}`);
    this.generateKey = options.generateKey ?? generateRsaKey;
  }

  /**
   * The first check, retried until it succeeds while the failures are transient (see START_BACKOFF);
   * a final failure throws at once, naming the store. `holdWrites`: what it would persist (a new CA
   * and certificate, a renewal due) is served but not written until persist(), so that a start
   * writes nothing before everything that can refuse it has passed.
   */
  async load(signal: AbortSignal, options: { holdWrites?: boolean } = {}): Promise<ServingMaterial> {
    this.holdWrites = options.holdWrites === true;
    await this.untilChecked(signal);
    return this.current();
  }

  /** Writes what load() held back, retried as load() is; nothing when nothing was held back. */
  async persist(signal: AbortSignal): Promise<void> {
    this.holdWrites = false;
    if (this.heldBack === undefined) return;
    await this.untilChecked(signal);
  }

  private async untilChecked(signal: AbortSignal): Promise<void> {
    const { store, logger } = this.options;
    try {
      await retryWithBackoff(() => this.refresh(signal), {
        ...START_BACKOFF,
        maxAttempts: Number.POSITIVE_INFINITY,
        signal,
        retryable: (error) => !signal.aborted && isTransient(error),
        retryAfterMs: retryAfterOf,
        onRetry: (error, attempt, delayMs) =>
          logger.warn({ store: store.description, attempt: attempt + 1, delayMs, error: (error as Error).message }, 'the generated TLS material could not be read or written yet; retrying'),
      });
    } catch (error) {
      if (signal.aborted && isAbortError(error)) throw error;
      if (signal.aborted) throw signal.reason;
      throw new Error(`TLS material (generate mode, ${store.description}): ${(error as Error).message}`, { cause: error });
    }
  }

  /** True when the material was made for this process only and written nowhere (render without --cert-dir). */
  get keptNowhere(): boolean {
    return this.options.store.keptNowhere === true;
  }

  current(): ServingMaterial {
    if (!this.serving) throw new Error('TLS material requested before it was loaded');
    return this.serving;
  }

  /**
   * One renewal check: read what is persisted, renew what is due, persist, adopt. Runs on the
   * timer after start(); callable directly (tests drive it with an injected clock).
   */
  refresh(signal: AbortSignal): Promise<void> {
    const check = this.checks.then(() => this.check(signal));
    this.checks = check.catch(() => undefined);
    return check;
  }

  private async check(signal: AbortSignal): Promise<void> {
    const bounded = deadlineSignal(this.options.checkTimeoutMs, signal);
    const material = await retryWithBackoff(() => this.reconcileOnce(bounded), {
      maxAttempts: 6,
      initialMs: 100,
      maxMs: 2000,
      signal: bounded,
      retryable: (error) => isTransient(error) && !bounded.aborted,
      retryAfterMs: retryAfterOf,
      onRetry: (error, attempt, delayMs) =>
        this.options.logger.debug({ attempt, delayMs, reason: (error as Error).message }, 'retrying certificate persistence'),
    });
    this.adopt(material);
  }

  start(signal: AbortSignal): void {
    if (this.loop) return;
    const controller = new AbortController();
    const done = this.renewLoop(AbortSignal.any([signal, controller.signal]));
    this.loop = { controller, done };
  }

  async stop(): Promise<void> {
    const loop = this.loop;
    this.loop = undefined;
    loop?.controller.abort();
    await loop?.done;
  }

  private async reconcileOnce(signal: AbortSignal): Promise<GeneratedMaterial> {
    const { store, logger, now } = this.options;
    const stored = await store.read(signal);
    // Nothing persisted but material in hand: the Secret was deleted; recreate it with what we serve.
    const basis = stored?.material ?? this.material;
    const at = now();
    const caConfirmed = await caConfirmationRule(this.options.confirmation, basis, at, this.options.policy.caPropagationMs, signal, logger);
    const result = await renewMaterial(basis, { now: at, caConfirmed }, this.options.policy, this.generateKey);
    if (stored && !result.changed) {
      this.heldBack = undefined;
      return result.material;
    }
    if (this.holdWrites) {
      this.heldBack = result.reasons;
      return result.material;
    }
    if ((await store.write(result.material, stored, signal)) === 'conflict') {
      throw new LostRace(`${store.description} was written concurrently`);
    }
    const held = this.heldBack;
    this.heldBack = undefined;
    const action = store.keptNowhere ? 'made, kept in memory only' : !stored && this.material && held === undefined ? 'recreated' : 'persisted';
    logger.info({ store: store.description, reasons: result.reasons.length > 0 ? result.reasons : (held ?? []) }, `certificate material ${action}`);
    return result.material;
  }

  private adopt(material: GeneratedMaterial): void {
    const previous = this.serving;
    const serving = servingMaterialOf(material);
    this.material = material;
    this.serving = serving;
    this.options.metrics.setNotAfter('serving', serving.certNotAfter);
    this.options.metrics.setNotAfter('ca', serving.caNotAfter);
    if (!previous) return;
    const bundleChanged = serving.caBundlePem !== previous.caBundlePem;
    const servingChanged = serving.certPem !== previous.certPem || serving.keyPem !== previous.keyPem;
    if (!bundleChanged && !servingChanged) return;
    this.options.metrics.reloaded();
    this.options.logger.info(
      { bundleChanged, servingChanged, certNotAfter: serving.certNotAfter, caNotAfter: serving.caNotAfter },
      'generated TLS material changed',
    );
    if (bundleChanged) this.emit('ca-bundle-change', serving.caBundlePem);
    if (servingChanged) this.emit('serving-change', serving);
  }

  private async renewLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.untilNextCheck(signal);
        await this.refresh(signal);
      } catch (error) {
        if (signal.aborted) return;
        this.options.metrics.reloadFailed();
        this.options.logger.warn({ reason: (error as Error).message }, 'certificate renewal check failed; keeping the current material');
      }
    }
  }

  /**
   * The check interval; but while a next CA waits to be trusted and the live configurations can be
   * read, as soon as they show it, so that the leaf moves within a poll of the confirmation.
   */
  private async untilNextCheck(signal: AbortSignal): Promise<void> {
    const { confirmation, checkIntervalMs, logger } = this.options;
    const pending = this.material?.nextCaCertPem;
    if (confirmation.kind !== 'live' || pending === undefined) return await sleep(checkIntervalMs, signal);
    const fingerprint = parseCertificates(pending)[0]?.fingerprint256 ?? '';
    const deadline = performance.now() + checkIntervalMs;
    for (let left = checkIntervalMs; left > 0; left = deadline - performance.now()) {
      await sleep(Math.min(confirmation.pollMs, left), signal);
      const trusted = await confirmation.trustedCas(deadlineSignal(this.options.checkTimeoutMs, signal)).catch((error: unknown) => {
        if (signal.aborted) throw error;
        logger.debug({ reason: (error as Error).message }, 'reading the CAs of the live configurations failed; trying again');
        return new Set<string>();
      });
      if (trusted.has(fingerprint)) {
        logger.info({ caFingerprint: fingerprint }, 'the live webhook configurations trust the next CA');
        return;
      }
    }
  }
}
