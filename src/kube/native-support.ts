import type { KubeConfig } from '@kubernetes/client-node';
import type { NativeSupport } from '../policy/engine.js';
import { readOrUndefined } from './api-errors.js';
import { getJson } from './paged-list.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './request-deadline.js';
import type { ServerVersion } from './server-version.js';

/** The group version whose ValidatingAdmissionPolicy and Binding a native entry is written as (GA in 1.30). */
export const VALIDATING_POLICY_GROUP_VERSION = 'admissionregistration.k8s.io/v1';

/**
 * Whether the cluster serves ValidatingAdmissionPolicies and their bindings in
 * admissionregistration.k8s.io/v1, read from discovery (what kubectl reads): a kube-apiserver
 * older than 1.30 lists neither (v1beta1 behind a feature gate is not used), and a 404 for the
 * group version says the same. Other failures reject (the caller retries).
 */
export async function readNativeSupport(kubeConfig: KubeConfig, signal: AbortSignal, version?: ServerVersion): Promise<NativeSupport> {
  const list = await readOrUndefined(() =>
    getJson<{ resources?: Array<{ name: string; verbs?: string[] }> }>(kubeConfig, `/apis/${VALIDATING_POLICY_GROUP_VERSION}`, DEFAULT_REQUEST_TIMEOUT_MS, signal),
  );
  const served = new Set((list?.resources ?? []).map((r) => r.name));
  if (served.has('validatingadmissionpolicies') && served.has('validatingadmissionpolicybindings')) return { validatingPolicies: true };
  const at = version ? `kube-apiserver ${version.gitVersion}` : 'kube-apiserver';
  return { validatingPolicies: false, why: `${at} lists no validatingadmissionpolicies in ${VALIDATING_POLICY_GROUP_VERSION} discovery; they are GA since 1.30` };
}

/** Without a cluster to ask (render offline): what a kube-apiserver of `version` serves (ValidatingAdmissionPolicy v1 since 1.30). */
export function nativeSupportOfVersion(version: { major: number; minor: number }, label: string): NativeSupport {
  if (version.major > 1 || version.minor >= 30) return { validatingPolicies: true };
  return { validatingPolicies: false, why: `Kubernetes ${label} has no ValidatingAdmissionPolicy v1; it is GA since 1.30` };
}
