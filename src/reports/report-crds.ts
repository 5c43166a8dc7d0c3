import type { KubeConfig } from '@kubernetes/client-node';
import { isNotFound } from '../kube/api-errors.js';
import { getJson } from '../kube/paged-list.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../kube/request-deadline.js';
import type { ReportApi } from './report-api.js';

/**
 * Whether the cluster serves both report kinds of `api` (their CustomResourceDefinitions are
 * installed and established): its discovery lists them. A group version the cluster does not
 * serve is a 404, an answer; any other failure rejects.
 */
export async function reportKindsServed(kubeConfig: KubeConfig, api: ReportApi, signal: AbortSignal): Promise<boolean> {
  try {
    const list = await getJson<{ resources?: { name: string }[] }>(kubeConfig, `/apis/${api.apiVersion}`, DEFAULT_REQUEST_TIMEOUT_MS, signal);
    const served = new Set((list.resources ?? []).map((r) => r.name));
    return served.has(api.namespaced.resource) && served.has(api.cluster.resource);
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}
