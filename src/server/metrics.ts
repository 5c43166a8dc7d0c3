import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Decisions counted: a review's outcome, or `invalid` for a request that was not a usable review. */
export type CountedDecision = 'allowed' | 'denied' | 'timeout' | 'error' | 'invalid';

export interface AdmissionMetrics {
  requests: Counter<'webhook' | 'operation' | 'decision'>;
  duration: Histogram<'webhook'>;
  inFlight: Gauge;
}

const REQUESTS = 'kube_admission_requests_total';
const DURATION = 'kube_admission_request_duration_seconds';
const IN_FLIGHT = 'kube_admission_requests_in_flight';

/** Reviews take about a millisecond; the buckets resolve that and still show the 1 s tail. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** The admission metrics on `registry`; reuses them when another server already registered them there. */
export function admissionMetrics(registry: Registry): AdmissionMetrics {
  const existing = registry.getSingleMetric(REQUESTS);
  if (existing) {
    return {
      requests: existing as Counter<'webhook' | 'operation' | 'decision'>,
      duration: registry.getSingleMetric(DURATION) as Histogram<'webhook'>,
      inFlight: registry.getSingleMetric(IN_FLIGHT) as Gauge,
    };
  }
  return {
    requests: new Counter({
      name: REQUESTS,
      help: 'Admission requests answered, by webhook, operation and decision (allowed, denied, timeout, error, invalid).',
      labelNames: ['webhook', 'operation', 'decision'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: DURATION,
      help: 'Time from receiving an admission review to answering it, in seconds.',
      labelNames: ['webhook'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: IN_FLIGHT,
      help: 'Admission reviews being handled right now.',
      registers: [registry],
    }),
  };
}
