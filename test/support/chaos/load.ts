/**
 * A steady admission load: `workers` loops, each paced so that together they send `ratePerSecond`
 * admissions (a slow answer delays only its own loop). Every outcome is checked against the
 * policy; latencies and failures are kept for the report.
 */
import { ControlPlaneDownError } from '../../../local-cluster/admission-caller/index.js';
import { PacedWorkers } from './paced-workers.js';
import type { ServiceModel } from './service.js';
import { sampleFor, type FailureReason, type ObjectClass } from './workload.js';

export interface FailureSample {
  atMs: number;
  reason: FailureReason;
  objectClass: ObjectClass;
  endpoint: string;
  message: string;
}

export interface LoadStats {
  served: number;
  byClass: Record<ObjectClass, number>;
  failed: number;
  failuresByReason: Partial<Record<FailureReason, number>>;
  /** The first few failures, in full, for diagnosis. */
  failureSamples: FailureSample[];
  retriedAfterEndpointLoss: number;
  /**
   * Writes sent while no kube-apiserver was up (an API restart): a client sees connection refused
   * and no webhook is called, so they are no admission outcome; counted apart, never hidden.
   */
  refusedByControlPlane: number;
  latenciesMs: number[];
}

const KEPT_FAILURE_SAMPLES = 20;

export class AdmissionLoad {
  readonly stats: LoadStats = {
    served: 0,
    byClass: { allow: 0, mutate: 0, deny: 0 },
    failed: 0,
    failuresByReason: {},
    failureSamples: [],
    retriedAfterEndpointLoss: 0,
    refusedByControlPlane: 0,
    latenciesMs: [],
  };
  readonly #workers: PacedWorkers;
  #index = 0;

  constructor(
    private readonly service: ServiceModel,
    private readonly options: { ratePerSecond: number; workers: number; startedAt: number },
  ) {
    this.#workers = new PacedWorkers({ ratePerSecond: options.ratePerSecond, workers: options.workers, task: () => this.#one() });
  }

  start(): void {
    this.#workers.start();
  }

  /** Stops sending and waits for the admissions in flight. */
  async stop(): Promise<LoadStats> {
    await this.#workers.stop();
    return this.stats;
  }

  async #one(): Promise<void> {
    const sample = sampleFor(this.#index++);
    const began = performance.now();
    let reason: FailureReason | undefined;
    let message = '';
    let endpoint = '';
    try {
      const served = await this.service.admit(sample.request);
      endpoint = served.endpoint;
      this.stats.retriedAfterEndpointLoss += served.retries;
      reason = sample.check(served.result);
      message = served.result.allowed ? JSON.stringify(served.result.auditAnnotations) : (served.result.status.message ?? '');
    } catch (error) {
      if (error instanceof ControlPlaneDownError) {
        this.stats.refusedByControlPlane++;
        return;
      }
      reason = 'caller-error';
      message = error instanceof Error ? error.message : String(error);
    }
    this.stats.latenciesMs.push(performance.now() - began);
    this.stats.served++;
    this.stats.byClass[sample.objectClass]++;
    if (reason === undefined) return;
    this.stats.failed++;
    this.stats.failuresByReason[reason] = (this.stats.failuresByReason[reason] ?? 0) + 1;
    if (this.stats.failureSamples.length < KEPT_FAILURE_SAMPLES) {
      this.stats.failureSamples.push({ atMs: began - this.options.startedAt, reason, objectClass: sample.objectClass, endpoint, message });
    }
  }
}
