import type { Logger } from 'pino';
import type { ConfigurationKind } from './configuration-api.js';
import { RegistrationError, type RegisterResult } from './register.js';
import type { RegistrationMetrics } from './registration-metrics.js';
import { UNMANAGED_ANNOTATION } from './unmanaged.js';

/**
 * Tells the leader's own updates (a new policy, CA or owner) from restores (someone else deleted
 * or changed a configuration), logs each write with what it changed, and keeps the metrics. It
 * remembers the resourceVersion each configuration had when this term last saw it as desired: a
 * write from that version is an update, a write from any other (or from nothing) a restore, and
 * so is the first write after the unmanaged annotation is removed.
 */
export class RestoreTracker {
  readonly #settled = new Map<ConfigurationKind, string>();
  readonly #unmanaged = new Set<ConfigurationKind>();
  readonly #logger: Logger;
  readonly #metrics: RegistrationMetrics | undefined;

  constructor(logger: Logger, metrics?: RegistrationMetrics) {
    this.#logger = logger;
    this.#metrics = metrics;
  }

  /** A new leadership term: what another leader wrote meanwhile is no restore. */
  startTerm(): void {
    this.#settled.clear();
  }

  /**
   * The term ended (step-down, shutdown): what it reported about the live configurations is the
   * next leader's to report. An ex-leader's unmanaged gauge left at 1 would keep its alert firing
   * after the operator removed the annotation, since only the leader reads the configurations.
   */
  endTerm(): void {
    this.#settled.clear();
    for (const kind of this.#unmanaged) this.#metrics?.setUnmanaged(kind, false);
    this.#unmanaged.clear();
  }

  observe(kind: ConfigurationKind, settled: RegisterResult | RegistrationError): void {
    if (settled instanceof RegistrationError) {
      this.#metrics?.registrationFailed(kind);
      return;
    }
    const wasUnmanaged = this.#unmanaged.has(kind);
    this.#noteUnmanaged(kind, settled.outcome === 'unmanaged');
    // Left alone: whatever the operator does meanwhile is compared with the last desired state.
    if (settled.outcome === 'unmanaged') return;
    if (settled.outcome === 'created' || settled.outcome === 'updated') this.#logWrite(kind, settled, wasUnmanaged);
    if (settled.version === undefined) this.#settled.delete(kind);
    else this.#settled.set(kind, settled.version);
  }

  /** `wasUnmanaged`: what the operator set by hand while it was left alone is put back: a restore. */
  #logWrite(kind: ConfigurationKind, written: RegisterResult, wasUnmanaged: boolean): void {
    const known = this.#settled.get(kind);
    const details = { kind, action: written.outcome, changes: written.changes };
    if (!wasUnmanaged && (known === undefined || written.readVersion === known)) {
      this.#logger.info(details, `webhook configuration ${written.outcome}`);
      return;
    }
    this.#metrics?.restored(kind);
    this.#logger.warn(details, written.outcome === 'created' ? 'webhook configuration restored: it was deleted' : 'webhook configuration restored: it was changed by someone else');
  }

  #noteUnmanaged(kind: ConfigurationKind, unmanaged: boolean): void {
    if (unmanaged === this.#unmanaged.has(kind)) return;
    this.#metrics?.setUnmanaged(kind, unmanaged);
    if (unmanaged) {
      this.#unmanaged.add(kind);
      this.#logger.warn({ kind, annotation: `${UNMANAGED_ANNOTATION}=true` }, 'webhook configuration marked unmanaged: left alone until the annotation is removed');
    } else {
      this.#unmanaged.delete(kind);
      this.#logger.info({ kind, annotation: UNMANAGED_ANNOTATION }, 'webhook configuration managed again: the annotation is gone');
    }
  }
}
