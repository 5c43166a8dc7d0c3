/**
 * What reviews add to /metrics: requests by webhook, operation and decision, their durations, the
 * reviews in flight, and calls for webhooks this replica does not serve. The hot path counts in
 * plain numbers, which the metrics read when scraped (prom-client's own inc() and observe() check
 * and hash their labels on every call).
 */
import { Counter, Gauge, Histogram, type HistogramConfiguration, type LabelValues, type Registry } from 'prom-client';
import type { Operation, WebhookType } from '../../admission/types.js';

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

/** The label value for names beyond the cap: not a DNS-1123 label, so no webhook can be called that. */
export const OTHER_NAMES_LABEL = '_other';
/** Distinct names counted per webhook type before the rest share OTHER_NAMES_LABEL. */
export const MAX_COUNTED_NAMES = 32;

/**
 * Metric label values for names taken from the URL. Anyone who reaches the port can invent
 * names, so the label set is capped: the first MAX_COUNTED_NAMES distinct names per type keep
 * their own series (a policy change has a handful), every later one is counted as `_other`.
 */
export class BoundedNameLabels {
  readonly #seen: Record<WebhookType, Set<string>> = { validating: new Set(), mutating: new Set() };
  readonly #max: number;

  constructor(max = MAX_COUNTED_NAMES) {
    this.#max = max;
  }

  label(type: WebhookType, name: string): string {
    const seen = this.#seen[type];
    if (seen.has(name)) return name;
    if (seen.size >= this.#max) return OTHER_NAMES_LABEL;
    seen.add(name);
    return name;
  }
}

/** The observations under one label value: counts per bucket (not cumulative; the last is past the highest bound) and their sum. */
export class HistogramTally {
  readonly #upperBounds: readonly number[];
  readonly buckets: Float64Array;
  sum = 0;
  count = 0;

  constructor(upperBounds: readonly number[]) {
    this.#upperBounds = upperBounds;
    this.buckets = new Float64Array(upperBounds.length + 1);
  }

  /** As prom-client's observe(): counted in the first bucket whose upper bound the value does not exceed. */
  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`histogram value must be a finite number, got ${value}`);
    const bounds = this.#upperBounds;
    let bucket = 0;
    while (bucket < bounds.length && !(value <= (bounds[bucket] as number))) bucket++;
    this.buckets[bucket] = (this.buckets[bucket] as number) + 1;
    this.sum += value;
    this.count += 1;
  }

  clear(): void {
    this.buckets.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

/** One line of the exposition, in the shape prom-client's registry formats. */
interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string>;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

export interface TalliedHistogramConfiguration<L extends string> extends HistogramConfiguration<L> {
  labelNames: readonly [L];
  buckets: number[];
}

/**
 * A prom-client Histogram with one label, observed through a tally per label value that is
 * plain arithmetic. prom-client's own observe() checks and hashes the labels on every call,
 * which on the admission hot path cost more than anything else this project adds to a review
 * (measured: `git log -p BENCHMARKS.md`). Registration, the scrape format, OpenMetrics and reset stay prom-client's:
 * this class only hands the registry its values, in the shape prom-client's Histogram does
 * (per label value: cumulative buckets by `le`, `+Inf`, `_sum`, `_count`).
 */
export class TalliedHistogram<L extends string> extends Histogram<L> {
  // A plain field, not #private: prom-client's constructor calls reset() before it exists.
  private tallies: Map<string, HistogramTally> | undefined = new Map();
  readonly #config: TalliedHistogramConfiguration<L>;

  constructor(config: TalliedHistogramConfiguration<L>) {
    super(config);
    this.#config = { ...config, buckets: [...config.buckets] };
    // prom-client's constructor sets its observe() on the instance, which would hide this class's.
    this.observe = TalliedHistogram.prototype.observe;
  }

  /** The tally of one label value, created empty on first use. Keep it: looking it up is the cost this class avoids. */
  tally(labelValue: string): HistogramTally {
    const tallies = this.#tallies();
    let tally = tallies.get(labelValue);
    if (!tally) {
      tally = new HistogramTally(this.#config.buckets);
      tallies.set(labelValue, tally);
    }
    return tally;
  }

  /** prom-client's observe(labels, value) lands in the same tallies; the forms without a label value have nothing to tally under. */
  override observe(labels: LabelValues<L> | number | object, value?: number): void {
    const label = this.#config.labelNames[0];
    const labelValue = typeof labels === 'object' && value !== undefined ? (labels as LabelValues<L>)[label] : undefined;
    if (labelValue === undefined) throw new TypeError(`${this.#config.name} is observed with its label: observe({ ${label} }, value)`);
    this.tally(String(labelValue)).observe(value as number);
  }

  /** Zeroes the tallies in place (their holders keep observing into them); like prom-client's, no series shows until observed again. */
  override reset(): void {
    super.reset();
    for (const tally of this.tallies?.values() ?? []) tally.clear();
  }

  /** The registry formats what this returns (prom-client's get() builds on it too). */
  async getForPromString(): Promise<{ name: string; help: string; type: string; values: ExportedValue[]; aggregator: string }> {
    const { name, help, buckets, labelNames, aggregator = 'sum' } = this.#config;
    const values: ExportedValue[] = [];
    for (const [labelValue, tally] of this.#tallies()) {
      if (tally.count === 0) continue;
      const sharedLabels = { [labelNames[0]]: labelValue };
      let cumulative = 0;
      buckets.forEach((bound, index) => {
        cumulative += tally.buckets[index] as number;
        values.push({ labels: { le: bound }, sharedLabels, value: cumulative, metricName: `${name}_bucket`, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels, value: tally.count, metricName: `${name}_bucket`, exemplar: null },
        { labels: {}, sharedLabels, value: tally.sum, metricName: `${name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels, value: tally.count, metricName: `${name}_count`, exemplar: undefined },
      );
    }
    return { name, help, type: 'histogram', values, aggregator };
  }

  #tallies(): Map<string, HistogramTally> {
    this.tallies ??= new Map();
    return this.tallies;
  }
}
