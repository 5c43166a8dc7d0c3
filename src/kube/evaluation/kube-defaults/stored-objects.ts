/**
 * What kube-apiserver's storage gives an object beyond the body it decoded and defaulted: the
 * metadata every stored object has (uid, creationTimestamp, resourceVersion), and what the
 * registry strategy of its kind writes (pkg/registry/core/namespace/strategy.go for Namespaces:
 * PrepareForCreate sets the status to phase Active and adds the `kubernetes` finalizer,
 * PrepareForUpdate keeps the stored finalizers and status, Canonicalize sets the label
 * kubernetes.io/metadata.name to the name, as the defaulter does whenever a Namespace is read).
 */
import { randomUUID } from 'node:crypto';
import { NAMESPACE_NAME_LABEL } from '../../../webhooks/excluded-namespaces.js';
import type { KubeObject } from '../../../admission/types.js';

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNamespace = (object: KubeObject): boolean => object.kind === 'Namespace' && object.apiVersion === 'v1';

/** The finalizer the namespace controller removes once the namespace's content is deleted. */
const KUBERNETES_FINALIZER = 'kubernetes';

/** kubeTime()'s last answer and its second: the tools ask once or twice per object, mostly within one second. */
let lastTime = { second: NaN, text: '' };

/** Seconds, in UTC: how kube-apiserver writes a metav1.Time. */
export function kubeTime(at: Date): string {
  const second = Math.floor(at.getTime() / 1000);
  if (second !== lastTime.second) lastTime = { second, text: at.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  return lastTime.text;
}

/** Made-up resourceVersions, increasing as storage's are (their value means nothing to a client). */
let resourceVersions = 0;

function withNameLabel(namespace: KubeObject): KubeObject {
  const name = namespace.metadata?.name;
  if (!name) return namespace;
  return { ...namespace, metadata: { ...namespace.metadata, labels: { ...namespace.metadata?.labels, [NAMESPACE_NAME_LABEL]: name } } };
}

const specOf = (object: KubeObject): Json => (isRecord(object['spec']) ? object['spec'] : {});
const finalizersOf = (object: KubeObject): unknown[] => (Array.isArray(specOf(object)['finalizers']) ? (specOf(object)['finalizers'] as unknown[]) : []);

/** The object as the validating admission of a CREATE sees it: its kind's PrepareForCreate and Canonicalize applied (a new object). */
export function preparedForCreate(object: KubeObject): KubeObject {
  if (!isNamespace(object)) return object;
  const finalizers = finalizersOf(object);
  const spec = { ...specOf(object), finalizers: finalizers.includes(KUBERNETES_FINALIZER) ? finalizers : [...finalizers, KUBERNETES_FINALIZER] };
  return withNameLabel({ ...object, spec, status: { phase: 'Active' } });
}

/** The object as the validating admission of an UPDATE sees it: its kind's PrepareForUpdate against the stored `old` and Canonicalize applied. */
export function preparedForUpdate(object: KubeObject, old: KubeObject): KubeObject {
  if (!isNamespace(object)) return object;
  const { finalizers: _given, ...spec } = specOf(object);
  const kept = old['spec'] !== undefined && isRecord(old['spec']) && old['spec']['finalizers'] !== undefined ? { finalizers: old['spec']['finalizers'] } : {};
  const { status: _status, ...rest } = object;
  return withNameLabel({ ...rest, spec: { ...spec, ...kept }, ...(old['status'] !== undefined ? { status: old['status'] } : {}) });
}

/**
 * An object kube-apiserver has stored, from one given as it was decoded: what storage always
 * writes is filled in where the file leaves it out (a uid, a creation time, a resourceVersion; for
 * a Namespace its name label, the `kubernetes` finalizer it was created with and phase Active),
 * what the file says is kept (a copy of the cluster's object stays as it is).
 */
export function asStored(object: KubeObject): KubeObject {
  let stored = object;
  if (isNamespace(object)) {
    const spec = specOf(object)['finalizers'] === undefined ? { ...specOf(object), finalizers: [KUBERNETES_FINALIZER] } : specOf(object);
    const status = isRecord(object['status']) ? object['status'] : {};
    stored = withNameLabel({ ...object, spec, status: status['phase'] ? status : { ...status, phase: 'Active' } });
  }
  const metadata = stored.metadata ?? {};
  return {
    ...stored,
    metadata: { ...metadata, uid: metadata.uid || randomUUID(), creationTimestamp: metadata.creationTimestamp || kubeTime(new Date()), resourceVersion: metadata.resourceVersion || String(++resourceVersions) },
  };
}
