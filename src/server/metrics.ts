import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { BoundedNameLabels } from './unserved-webhook.js';

/** Decisions counted: a review's outcome, or `invalid` for a request that was not a usable review. */
export type CountedDecision = 'allowed' | 'denied' | 'timeout' | 'error' | 'invalid';

export interface AdmissionMetrics {
  requests: Counter<'webhook' | 'operation' | 'decision'>;
  duration: Histogram<'webhook'>;
  inFlight: Gauge;
  /** Reviews allowed because this replica does not serve the webhook named in the path. */
  unknownWebhook: Counter<'type' | 'webhook'>;
  /** The `webhook` label of unknownWebhook: names from the URL, capped. */
  unknownWebhookLabels: BoundedNameLabels;
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
  const metrics: AdmissionMetrics = {
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
    unknownWebhook: new Counter({
      name: UNKNOWN_WEBHOOK,
      help: 'Reviews for a webhook this replica does not serve (replicas on different policy versions), allowed with a warning. The first 32 names per type are labelled, later ones "_other".',
      labelNames: ['type', 'webhook'],
      registers: [registry],
    }),
    unknownWebhookLabels: new BoundedNameLabels(),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
