/** Reading Deployments, ReplicaSets and Pods the way their controllers do. */
import { isRecord, type KubeObject, type OwnerReference } from '../fake-apiserver/objects.js';
import { selectorMatches, type LabelSelector } from '../fake-apiserver/label-selector.js';

type Json = Record<string, unknown>;

export const rec = (value: unknown): Json => (isRecord(value) ? value : {});
export const records = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);

export const specOf = (object: KubeObject): Json => rec(object.spec);
export const statusOf = (object: KubeObject): Json => rec(object.status);

export function replicasOf(object: KubeObject): number {
  const replicas = specOf(object).replicas;
  return typeof replicas === 'number' ? replicas : 1;
}

export function controllerRef(object: KubeObject): OwnerReference | undefined {
  return (object.metadata?.ownerReferences ?? []).find((ref) => ref.controller === true);
}

export const isControlledBy = (object: KubeObject, owner: KubeObject): boolean => controllerRef(object)?.uid === owner.metadata?.uid;

export function selectorOf(object: KubeObject): LabelSelector {
  return rec(specOf(object).selector) as LabelSelector;
}

export const matchesSelector = (object: KubeObject, selector: LabelSelector): boolean => selectorMatches(selector, object.metadata?.labels ?? {});

export function podPhase(pod: KubeObject): string {
  return String(statusOf(pod).phase ?? 'Pending');
}

export function isPodActive(pod: KubeObject): boolean {
  const phase = podPhase(pod);
  return pod.metadata?.deletionTimestamp === undefined && phase !== 'Succeeded' && phase !== 'Failed';
}

export function podCondition(pod: KubeObject, type: string): Json | undefined {
  return records(statusOf(pod).conditions).find((c) => c.type === type);
}

export const isPodReady = (pod: KubeObject): boolean => podCondition(pod, 'Ready')?.status === 'True';

/** Ready for at least minReadySeconds. */
export function isPodAvailable(pod: KubeObject, minReadySeconds: number, now = Date.now()): boolean {
  const ready = podCondition(pod, 'Ready');
  if (ready?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const since = Date.parse(String(ready.lastTransitionTime ?? ''));
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= now;
}

export function annotation(object: KubeObject, key: string): string | undefined {
  return object.metadata?.annotations?.[key];
}

export const templateOf = (object: KubeObject): Json => rec(specOf(object).template);
