import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { HandlerCounter, HandlerGauge, HandlerHistogram, HandlerMetrics, MetricOptions } from '../admission/handler-services.js';

type Kind = 'counter' | 'gauge' | 'histogram';

interface Created {
  kind: Kind;
  labelNames: string;
  metric: Counter | Gauge | Histogram;
}

/** The names the server's own metrics start with: a handler's metric may not take them. */
const RESERVED_PREFIXES = ['kube_admission_', 'process_', 'nodejs_'];

/**
 * Handlers' metrics on the server's registry, created on first use and returned again after:
 * handlers ask for a metric where they use it, on every review, at the cost of a map lookup.
 */
export class RegistryHandlerMetrics implements HandlerMetrics {
  readonly #registry: Registry;
  readonly #created = new Map<string, Created>();

  constructor(registry: Registry) {
    this.#registry = registry;
  }

  counter(options: MetricOptions): HandlerCounter {
    return this.#get('counter', options, () => new Counter({ ...this.#base(options), registers: [this.#registry] })) as Counter;
  }

  gauge(options: MetricOptions): HandlerGauge {
    return this.#get('gauge', options, () => new Gauge({ ...this.#base(options), registers: [this.#registry] })) as Gauge;
  }

  histogram(options: MetricOptions & { buckets?: readonly number[] }): HandlerHistogram {
    return this.#get('histogram', options, () =>
      new Histogram({ ...this.#base(options), ...(options.buckets ? { buckets: [...options.buckets] } : {}), registers: [this.#registry] }),
    ) as Histogram;
  }

  #base(options: MetricOptions): { name: string; help: string; labelNames: string[] } {
    return { name: options.name, help: options.help, labelNames: [...(options.labelNames ?? [])] };
  }

  #get(kind: Kind, options: MetricOptions, create: () => Counter | Gauge | Histogram): Counter | Gauge | Histogram {
    const labelNames = [...(options.labelNames ?? [])].join(',');
    const existing = this.#created.get(options.name);
    if (existing) {
      if (existing.kind !== kind || existing.labelNames !== labelNames) {
        throw new Error(`metric "${options.name}" exists as a ${existing.kind} with labels [${existing.labelNames}]; asked for a ${kind} with [${labelNames}]`);
      }
      return existing.metric;
    }
    if (RESERVED_PREFIXES.some((prefix) => options.name.startsWith(prefix)) || this.#registry.getSingleMetric(options.name)) {
      throw new Error(`metric "${options.name}" is the server's own or uses its prefixes (${RESERVED_PREFIXES.join(', ')}): choose a name of your own`);
    }
    const metric = create();
    this.#created.set(options.name, { kind, labelNames, metric });
    return metric;
  }
}

/** One set per registry, so that servers and helpers sharing a registry share the metrics. */
const byRegistry = new WeakMap<Registry, RegistryHandlerMetrics>();

/** The handler metrics on `registry`. */
export function handlerMetrics(registry: Registry): RegistryHandlerMetrics {
  let metrics = byRegistry.get(registry);
  if (!metrics) {
    metrics = new RegistryHandlerMetrics(registry);
    byRegistry.set(registry, metrics);
  }
  return metrics;
}
