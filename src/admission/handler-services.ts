/**
 * What the server gives a handler at run time besides the request: a logger bound to the review,
 * custom metrics on the server's registry, and the RBAC a handler declares for its own API calls.
 */

/** A log method: a message, or fields and a message (pino's call shapes). */
export interface HandlerLogFn {
  (message: string): void;
  (fields: Record<string, unknown>, message?: string): void;
}

/**
 * The server's logger (pino) as a handler sees it: JSON lines at the server's --log-level, every
 * line carrying the review's `uid` and the `webhook` name. Keys named like key material are
 * redacted as in the server's own lines.
 */
export interface HandlerLogger {
  trace: HandlerLogFn;
  debug: HandlerLogFn;
  info: HandlerLogFn;
  warn: HandlerLogFn;
  error: HandlerLogFn;
  /** A logger whose lines also carry `bindings`. */
  child(bindings: Record<string, unknown>): HandlerLogger;
  /** Whether a line at `level` would be written: skip building costly fields when not. */
  isLevelEnabled(level: 'trace' | 'debug' | 'info' | 'warn' | 'error'): boolean;
}

/** Label values of one series. */
export type MetricLabels = Record<string, string | number>;

/** What a metric is: its name (Prometheus syntax, not the server's `kube_admission_` prefix), help text and label names. */
export interface MetricOptions {
  name: string;
  help: string;
  labelNames?: readonly string[];
}

/** A counter: only goes up. */
export interface HandlerCounter {
  /** Adds `value` (default 1) to the series without labels. */
  inc(value?: number): void;
  /** Adds `value` (default 1) to the series of `labels`. */
  inc(labels: MetricLabels, value?: number): void;
}

/** A gauge: a value that goes up and down. */
export interface HandlerGauge {
  /** Sets the series without labels to `value`. */
  set(value: number): void;
  /** Sets the series of `labels` to `value`. */
  set(labels: MetricLabels, value: number): void;
  /** Adds `value` (default 1) to the series without labels. */
  inc(value?: number): void;
  /** Adds `value` (default 1) to the series of `labels`. */
  inc(labels: MetricLabels, value?: number): void;
  /** Subtracts `value` (default 1) from the series without labels. */
  dec(value?: number): void;
  /** Subtracts `value` (default 1) from the series of `labels`. */
  dec(labels: MetricLabels, value?: number): void;
}

/** A histogram: observed values in buckets. */
export interface HandlerHistogram {
  /** Records `value` in the series without labels. */
  observe(value: number): void;
  /** Records `value` in the series of `labels`. */
  observe(labels: MetricLabels, value: number): void;
}

/**
 * Custom metrics on the server's Prometheus registry, scraped on /metrics with its own. Each call
 * returns the metric of that name, creating it on first use, so a handler asks for it where it
 * uses it: `context.metrics.counter({ name: 'images_denied_total', help: '...', labelNames:
 * ['registry'] }).inc({ registry })`. Asking again with another type or other label names throws,
 * and so does a name of the server's own metrics.
 */
export interface HandlerMetrics {
  /** The counter `options.name`, created on first use. */
  counter(options: MetricOptions): HandlerCounter;
  /** The gauge `options.name`, created on first use. */
  gauge(options: MetricOptions): HandlerGauge;
  /** The histogram `options.name` (prom-client's default buckets unless given), created on first use. */
  histogram(options: MetricOptions & { buckets?: readonly number[] }): HandlerHistogram;
}
