/**
 * How long the API itself shows a webhook configuration unwritten: evidence that its caBundles
 * have been in place longer than a just-started process has seen them.
 *
 * kube-apiserver moves a managedFields entry's `time` only when that manager's write changed the
 * object, so the latest time of all entries is no earlier than the last change of anything in it,
 * the caBundles included; a delete-and-create (a GitOps tool's force-replace) starts them afresh.
 * That time is the writing kube-apiserver's clock, and the answer's Date header the answering
 * one's: their difference is an age measured on the control plane's clocks alone, whatever this
 * pod's clock says. Each side is conservative: both are whole seconds (the write may have come up
 * to a second after its stamp), and two kube-apiservers' clocks may differ a little. An object
 * without managedFields, an entry without a time or an answer without a Date proves nothing.
 */
import type { WebhookConfiguration } from './configuration-api.js';

/** managedFields times and the Date header are whole seconds: the write may be up to this much later. */
const STAMP_RESOLUTION_MS = 1000;
/** How far the writing and the answering kube-apiserver's clocks may differ (a control plane runs NTP). */
const API_CLOCK_SKEW_MS = 1000;

/** The latest managedFields time of `configuration` (epoch ms); undefined when any entry has none, or there are none. */
export function lastWrittenAt(configuration: WebhookConfiguration): number | undefined {
  const entries = configuration.metadata?.managedFields ?? [];
  if (entries.length === 0) return undefined;
  let latest = Number.NEGATIVE_INFINITY;
  for (const entry of entries) {
    const at = entry.time === undefined ? Number.NaN : new Date(entry.time).getTime();
    if (Number.isNaN(at)) return undefined;
    latest = Math.max(latest, at);
  }
  return latest;
}

/**
 * The least time `configuration` can have gone unwritten when the API answered at `apiDateMs`
 * (its Date header); undefined without the evidence. May be negative: then it proves nothing.
 */
export function unwrittenForAtLeastMs(configuration: WebhookConfiguration, apiDateMs: number | undefined): number | undefined {
  const written = lastWrittenAt(configuration);
  if (written === undefined || apiDateMs === undefined) return undefined;
  return apiDateMs - (written + STAMP_RESOLUTION_MS) - API_CLOCK_SKEW_MS;
}
