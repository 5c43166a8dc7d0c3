/**
 * Typed access to the pod specs and containers of any workload: a Pod, or the pod template of a
 * Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job, CronJob or
 * PodTemplate. Live references: edit them in place in a mutating handler.
 */
import type { V1Container, V1EphemeralContainer, V1ObjectMeta, V1PodSpec } from '../kinds/models.js';
import { containersOf, podSpecsOf, type ContainerKind } from '../pod-specs.js';
import type { KubeObject } from '../types.js';

/** A pod spec inside a workload, typed. */
export interface WorkloadPodSpec {
  /** "" for a Pod itself, e.g. `pod template of Deployment "web"` otherwise. */
  description: string;
  spec: V1PodSpec;
  /** The pod's (or pod template's) metadata, created when missing: where pod labels go. */
  metadata: () => V1ObjectMeta;
}

/** A container of a workload, typed, with where it is. */
export interface WorkloadContainer {
  kind: ContainerKind;
  /** A live reference: edit it in place. Ephemeral containers have the same fields but ports, probes and resources are refused. */
  container: V1Container | V1EphemeralContainer;
  name: string;
  podSpec: WorkloadPodSpec;
}

/** What a workload helper accepts: any object (typed or not); kinds without pod specs have none. */
export type AnyObject = KubeObject | { apiVersion?: string; kind?: string };

/** The pod specs of `object`: the Pod's own, or the workload's pod template; none for other kinds. */
export function workloadPodSpecs(object: AnyObject | null | undefined): WorkloadPodSpec[] {
  return podSpecsOf(object as KubeObject | null | undefined) as unknown as WorkloadPodSpec[];
}

/**
 * Every container of `object`: init containers, containers and ephemeral containers of each pod
 * spec, or only those of `kinds`.
 */
export function workloadContainers(object: AnyObject | null | undefined, kinds?: readonly ContainerKind[]): WorkloadContainer[] {
  return workloadPodSpecs(object).flatMap((podSpec) =>
    containersOf(podSpec.spec as unknown as Record<string, unknown>)
      .filter((ref) => !kinds || kinds.includes(ref.kind))
      .map((ref) => ({ kind: ref.kind, container: ref.container as unknown as V1Container, name: ref.name, podSpec })),
  );
}
