import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RunHandler } from '../kube/evaluation/simulate.js';
import { sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { PendingTrigger } from '../util/pending-trigger.js';
import { AuditTerm, DEFAULT_TUNING, type AuditPolicy, type AuditTuning } from './audit-term.js';
import type { ReportApi } from './report-api.js';
import { ReportMetrics } from './report-metrics.js';

export type { AuditPolicy, AuditTuning } from './audit-term.js';

const RESTART = { initialMs: 1000, maxMs: 60_000 };

export interface BackgroundAuditOptions {
  /** The audit's own connections (its own pool: its lists and writes never queue admission's calls). */
  kubeConfig: KubeConfig;
  /** objects: reports (metrics and logs only while their CRDs are missing); metrics: the gauge and logs only. */
  mode: 'metrics' | 'objects';
  api: ReportApi;
  /** The install's name: its reports' names and label. */
  install: string;
  maxBytes: number;
  events: boolean;
  /** This pod, which sends the Events. */
  instance: string;
  /** The ClusterRole that owns the install: the reports name it, so that uninstalling removes them. */
  ownerClusterRole: string | undefined;
  /** The policy as it is now (read at each term start and after each change). */
  policy: () => AuditPolicy;
  /** The server's handler run: the audit decides as admission does. */
  run: RunHandler;
  registry: Registry;
  logger: Logger;
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
