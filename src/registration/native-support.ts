import type { KubeConfig } from '@kubernetes/client-node';
import type { NativeSupport } from '../policy/engine.js';
import { readOrUndefined } from '../kube/api-errors.js';
import { getJson } from '../kube/paged-list.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../kube/request-deadline.js';
import type { ServerVersion } from '../kube/server-version.js';

/** The group version whose ValidatingAdmissionPolicy and Binding a native entry is written as (GA in 1.30). */
export const VALIDATING_POLICY_GROUP_VERSION = 'admissionregistration.k8s.io/v1';

/** The group version whose MutatingAdmissionPolicy and Binding a native mutating entry is written as (beta since 1.34). */
export const MUTATING_POLICY_GROUP_VERSION = 'admissionregistration.k8s.io/v1beta1';

type Discovery = { resources?: Array<{ name: string; verbs?: string[] }> };

/** The resources a group version lists in discovery; none for a 404 (not served). Other failures reject. */
async function servedResources(kubeConfig: KubeConfig, groupVersion: string, signal: AbortSignal): Promise<Set<string>> {
  const list = await readOrUndefined(() => getJson<Discovery>(kubeConfig, `/apis/${groupVersion}`, DEFAULT_REQUEST_TIMEOUT_MS, signal));
  return new Set((list?.resources ?? []).map((r) => r.name));
}

/**
 * Whether the cluster serves ValidatingAdmissionPolicies and their bindings in
 * admissionregistration.k8s.io/v1, and MutatingAdmissionPolicies and theirs in v1beta1, read
 * from discovery (what kubectl reads): a kube-apiserver older than 1.30 lists no VAPs (v1beta1
 * behind a feature gate is not used); one older than 1.34, or one that did not turn the beta API
 * on, lists no MAPs (v1alpha1 of 1.32-1.33 is not used: alpha, and off by default). A 404 for a
 * group version says the same. Other failures reject (the caller retries).
 */
export async function readNativeSupport(kubeConfig: KubeConfig, signal: AbortSignal, version?: ServerVersion): Promise<NativeSupport> {
  const [validating, mutating] = await Promise.all([
    servedResources(kubeConfig, VALIDATING_POLICY_GROUP_VERSION, signal),
    servedResources(kubeConfig, MUTATING_POLICY_GROUP_VERSION, signal),
  ]);
  const at = version ? `kube-apiserver ${version.gitVersion}` : 'kube-apiserver';
  const validatingPolicies = validating.has('validatingadmissionpolicies') && validating.has('validatingadmissionpolicybindings');
  const mutatingPolicies = mutating.has('mutatingadmissionpolicies') && mutating.has('mutatingadmissionpolicybindings');
  return {
    validatingPolicies,
    ...(validatingPolicies ? {} : { why: `${at} lists no validatingadmissionpolicies in ${VALIDATING_POLICY_GROUP_VERSION} discovery; they are GA since 1.30` }),
    mutatingPolicies,
    ...(mutatingPolicies
      ? {}
      : { mutatingWhy: `${at} lists no mutatingadmissionpolicies in ${MUTATING_POLICY_GROUP_VERSION} discovery; they are beta since 1.34, served when the API (--runtime-config) and the MutatingAdmissionPolicy feature gate are on` }),
  };
}

/**
 * Without a cluster to ask (render offline): what a kube-apiserver of `version` serves
 * (ValidatingAdmissionPolicy v1 since 1.30; MutatingAdmissionPolicy v1beta1 since 1.34, assumed
 * turned on: it is off by default, which only a cluster's discovery can tell).
 */
export function nativeSupportOfVersion(version: { major: number; minor: number }, label: string): NativeSupport {
  const since = (minor: number): boolean => version.major > 1 || version.minor >= minor;
  return {
    validatingPolicies: since(30),
    ...(since(30) ? {} : { why: `Kubernetes ${label} has no ValidatingAdmissionPolicy v1; it is GA since 1.30` }),
    mutatingPolicies: since(34),
    ...(since(34) ? {} : { mutatingWhy: `Kubernetes ${label} has no MutatingAdmissionPolicy v1beta1; it is beta since 1.34` }),
  };
}
