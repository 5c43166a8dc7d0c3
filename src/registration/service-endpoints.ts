import type { V1EndpointSlice } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { deadlineSignal, sleep } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { PendingTrigger } from '../util/pending-trigger.js';
import { formatApiFailure, isForbidden, isRetryable } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { callApi } from '../kube/request-deadline.js';
import { watchEvents } from '../kube/watch-events.js';

/** The label the EndpointSlice controller puts on every slice of a Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** Between watch events, a fresh list at least this often (a watch can miss what happens while it reconnects). */
const RELIST_MS = 5000;
/** Between failed lists (5xx, no answer): 0.2 s doubling to 2 s. */
const LIST_BACKOFF = { initialMs: 200, maxMs: 2000 } as const;

export interface ServiceRef {
  namespace: string;
  name: string;
}

/**
 * 'ready': a slice of the Service has a ready endpoint. 'timed-out': none within the bound.
 * 'unreadable': the slices cannot be read for good (403: RBAC without list on EndpointSlices).
 */
export type EndpointWait =
  | { outcome: 'ready'; waitedMs: number; /** The first list showed it: it may have been ready for long. */ readyAtFirstLook: boolean }
  | { outcome: 'timed-out'; waitedMs: number }
  | { outcome: 'unreadable'; waitedMs: number; error: string };

/**
 * The endpoints that take traffic, as kube-proxy reads the slices: `ready` unset counts as ready
 * (the API says nil means true), a terminating one does not (its `ready` is false unless the
 * Service publishes not-ready addresses, which kube-proxy then routes to as well).
 */
export function readyEndpointCount(slices: readonly V1EndpointSlice[]): number {
  return slices.flatMap((slice) => slice.endpoints ?? []).filter((endpoint) => endpoint.conditions?.ready !== false).length;
}

/**
 * Waits until the Service has a ready endpoint: a list of its EndpointSlices (label
 * kubernetes.io/service-name), again at every watch event and at least every 5 s, until one shows
 * a ready endpoint, `timeoutMs` passes or `signal` aborts (then it rejects with the reason). A
 * failed list is retried with backoff; a 403 ends the wait at once ('unreadable'): no right to
 * look is not a reason to keep a registration back.
 */
export async function waitForReadyEndpoint(api: KubeApi, service: ServiceRef, options: { timeoutMs: number; signal: AbortSignal; logger: Logger }): Promise<EndpointWait> {
  const started = performance.now();
  const waitedMs = (): number => Math.round(performance.now() - started);
  const labelSelector = `${SERVICE_NAME_LABEL}=${service.name}`;
  const stop = new AbortController();
  const deadline = deadlineSignal(options.timeoutMs, options.signal, stop.signal);
  const changed = new PendingTrigger();
  const watching = watchEvents({
    kubeConfig: api.kubeConfig,
    path: `/apis/discovery.k8s.io/v1/namespaces/${service.namespace}/endpointslices`,
    labelSelector,
    what: `EndpointSlices of Service ${service.name}`,
    onEvent: () => changed.fire(),
    signal: deadline,
    logger: options.logger,
  });
  try {
    for (let failures = 0, looks = 0; ; ) {
      await changed.take(RELIST_MS, deadline);
      if (options.signal.aborted) throw options.signal.reason;
      if (deadline.aborted) return { outcome: 'timed-out', waitedMs: waitedMs() };
      try {
        const slices = await callApi(deadline, (o) => api.discovery.listNamespacedEndpointSlice({ namespace: service.namespace, labelSelector }, o));
        if (readyEndpointCount(slices.items) > 0) return { outcome: 'ready', waitedMs: waitedMs(), readyAtFirstLook: looks === 0 };
        looks++;
        failures = 0;
      } catch (error) {
        if (options.signal.aborted) throw options.signal.reason;
        if (deadline.aborted) return { outcome: 'timed-out', waitedMs: waitedMs() };
        if (isForbidden(error)) return { outcome: 'unreadable', waitedMs: waitedMs(), error: formatApiFailure(error) };
        const level = isRetryable(error) ? 'debug' : 'warn';
        options.logger[level]({ service: service.name, error: formatApiFailure(error) }, 'listing the EndpointSlices of the Service failed; retrying');
        await sleep(backoffDelay(failures++, LIST_BACKOFF), deadline).catch(() => undefined);
        changed.fire();
      }
    }
  } finally {
    stop.abort();
    await watching;
  }
}
