import { Histogram, type HistogramConfiguration, type LabelValues } from 'prom-client';

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
