import { Counter, Gauge, type Registry } from 'prom-client';
import type { Operation } from '../admission/types.js';
import { TalliedHistogram, type HistogramTally } from './tallied-histogram.js';
import { BoundedNameLabels } from './unserved-webhook.js';

/** Decisions counted: a review's outcome, or `invalid` for a request that was not a usable review. */
/** `retry`: a 503 asking kube-apiserver to send the call again (this replica lacks entries the call names). */
export type CountedDecision = 'allowed' | 'denied' | 'timeout' | 'error' | 'invalid' | 'retry';
/** The review's operation, or '' for a request that was not a usable review. */
export type CountedOperation = Operation | '';

const OPERATIONS: readonly CountedOperation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', ''];
const DECISIONS: readonly CountedDecision[] = ['allowed', 'denied', 'timeout', 'error', 'invalid', 'retry'];

/**
 * What one webhook's reviews add to the metrics, as plain numbers: prom-client checks and hashes
 * the labels of every inc() and observe(), about 7k instructions per review (measured: `git log -p BENCHMARKS.md`), so
 * the hot path counts here and the metrics read these counts when scraped.
 */
export class WebhookMetrics {
  readonly webhook: string;
  /** Requests answered, by OPERATIONS index * DECISIONS.length + DECISIONS index. */
  readonly #requests = new Float64Array(OPERATIONS.length * DECISIONS.length);
  /** How many of #requests the prom-client counter has been given. */
  readonly #reported = new Float64Array(OPERATIONS.length * DECISIONS.length);
  readonly #durations: TalliedHistogram<'webhook'>;
  /** Taken on the first observation: a label with only invalid requests has no duration series. */
  #duration: HistogramTally | undefined;

  constructor(webhook: string, durations: TalliedHistogram<'webhook'>) {
    this.webhook = webhook;
    this.#durations = durations;
  }

  countRequest(operation: CountedOperation, decision: CountedDecision): void {
    const index = OPERATIONS.indexOf(operation) * DECISIONS.length + DECISIONS.indexOf(decision);
    this.#requests[index] = (this.#requests[index] as number) + 1;
  }

  observeDuration(seconds: number): void {
    this.#duration ??= this.#durations.tally(this.webhook);
    this.#duration.observe(seconds);
  }

  /** Adds what was counted since the last call to `counter` (at scrape time). */
  reportRequests(counter: Counter<'webhook' | 'operation' | 'decision'>): void {
    this.#requests.forEach((count, index) => {
      const delta = count - (this.#reported[index] as number);
      if (delta === 0) return;
      const operation = OPERATIONS[Math.floor(index / DECISIONS.length)] as CountedOperation;
      const decision = DECISIONS[index % DECISIONS.length] as CountedDecision;
      counter.inc({ webhook: this.webhook, operation, decision }, delta);
      this.#reported[index] = count;
    });
  }
}

export interface AdmissionMetrics {
  /** The counts of one webhook label (a served webhook's name, or a label standing for several). */
  webhook(label: string): WebhookMetrics;
  inFlight: Gauge;
  /** Reviews allowed because this replica does not serve the webhook named in the path. */
  unknownWebhook: Counter<'type' | 'webhook'>;
  /** The `webhook` label of unknownWebhook: names from the URL, capped. */
  unknownWebhookLabels: BoundedNameLabels;
  /** Labels of groups this replica does not register (names from the URL, capped). */
  groupLabels: BoundedNameLabels;
}

const REQUESTS = 'kube_admission_requests_total';
const DURATION = 'kube_admission_request_duration_seconds';
const IN_FLIGHT = 'kube_admission_requests_in_flight';
const UNKNOWN_WEBHOOK = 'kube_admission_unknown_webhook_total';

/** Reviews take about a millisecond; the buckets resolve that and still show the 1 s tail. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** One set per registry, so that servers sharing a registry share the counters and the label cap. */
const byRegistry = new WeakMap<Registry, AdmissionMetrics>();

/** The admission metrics on `registry`; reuses them when another server already registered them there. */
export function admissionMetrics(registry: Registry): AdmissionMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const byWebhook = new Map<string, WebhookMetrics>();
  new Counter({
    name: REQUESTS,
    help: 'Admission requests answered, by webhook, operation and decision (allowed, denied, timeout, error, invalid).',
    labelNames: ['webhook', 'operation', 'decision'],
    registers: [registry],
    collect() {
      for (const webhook of byWebhook.values()) webhook.reportRequests(this);
    },
  });
  const duration = new TalliedHistogram({
    name: DURATION,
    help: 'Time from receiving an admission review to answering it, in seconds.',
    labelNames: ['webhook'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const metrics: AdmissionMetrics = {
    webhook(label) {
      let webhook = byWebhook.get(label);
      if (!webhook) {
        webhook = new WebhookMetrics(label, duration);
        byWebhook.set(label, webhook);
      }
      return webhook;
    },
    inFlight: new Gauge({
      name: IN_FLIGHT,
      help: 'Admission reviews being handled right now.',
      registers: [registry],
    }),
    unknownWebhook: new Counter({
      name: UNKNOWN_WEBHOOK,
      help: 'Reviews for a webhook this replica does not serve (replicas on different policy versions): allowed with a warning, or answered 503 for kube-apiserver to retry elsewhere. The first 32 names per type are labelled, later ones "_other".',
      labelNames: ['type', 'webhook'],
      registers: [registry],
    }),
    unknownWebhookLabels: new BoundedNameLabels(),
    groupLabels: new BoundedNameLabels(),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
