import type { Registry } from 'prom-client';
import { sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { PendingTrigger } from '../util/pending-trigger.js';
import { AuditTerm, DEFAULT_TUNING, type AuditTermOptions, type AuditTuning } from './audit-term.js';
import { ReportMetrics } from './report-metrics.js';

export type { AuditPolicy, AuditTuning } from './audit-term.js';

const RESTART = { initialMs: 1000, maxMs: 60_000 };

/** What a term needs (AuditTermOptions), with the registry its metrics go to and tuning by exception. */
export interface BackgroundAuditOptions extends Omit<AuditTermOptions, 'metrics' | 'tuning'> {
  registry: Registry;
  tuning?: Partial<AuditTuning>;
}

/**
 * The leader's background audit of what the cluster already stores (docs/reports.md). It runs a
 * term while this replica leads (runTerm, from the registration's leadership), and each new
 * leader starts from the cluster: it lists, judges, and writes only the reports that differ from
 * those stored. Admission never waits for it: it works at low priority in short slices on its own
 * connections.
 */
export class BackgroundAudit {
  readonly #options: BackgroundAuditOptions;
  readonly #metrics: ReportMetrics;
  readonly #policyChanged = new PendingTrigger(false);

  constructor(options: BackgroundAuditOptions) {
    this.#options = options;
    this.#metrics = new ReportMetrics(options.registry);
  }

  /** A new policy version (or new custom handlers): the running term judges again what it touches. */
  policyChanged(): void {
    this.#policyChanged.fire();
  }

  /** One term of leadership; resolves when `signal` aborts. Never rejects: a failed run starts again after a backoff. */
  async runTerm(signal: AbortSignal): Promise<void> {
    const { logger } = this.#options;
    logger.info({ mode: this.#options.mode, api: this.#options.api.apiVersion }, 'background audit started');
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        await new AuditTerm({ ...this.#options, metrics: this.#metrics, tuning: { ...DEFAULT_TUNING, ...this.#options.tuning } }, signal).run(this.#policyChanged);
      } catch (error) {
        if (signal.aborted) break;
        const delayMs = backoffDelay(attempt, RESTART);
        logger.error({ error: error instanceof Error ? error.message : String(error), retryInMs: delayMs }, 'background audit failed; starting it again');
        await sleep(delayMs, signal).catch(() => undefined);
      }
    }
    logger.info('background audit stopped');
  }
}
