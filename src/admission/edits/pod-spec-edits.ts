/**
 * Pod spec edits for mutating handlers, on every pod spec of any workload (a Pod or a workload's
 * pod template). Each is idempotent: applied to an object that already has what it adds, it
 * changes nothing, so the server computes no patch (reinvocation is harmless).
 */
import type { V1EnvVar, V1Toleration, V1Volume, V1VolumeMount } from '../kinds/models.js';
import type { ContainerKind } from '../pod-specs.js';
import { workloadContainers, workloadPodSpecs, type AnyObject, type WorkloadContainer } from './workload-containers.js';

/** Which containers an edit applies to; default every container of every kind. */
export interface ContainerFilter {
  /** Only these container kinds (e.g. `['container']` leaves init and ephemeral containers alone). */
  kinds?: readonly ContainerKind[];
  /** Only containers this returns true for (by name, image...). */
  where?: (container: WorkloadContainer) => boolean;
}

function selected(object: AnyObject, filter: ContainerFilter | undefined): WorkloadContainer[] {
  const containers = workloadContainers(object, filter?.kinds);
  return filter?.where ? containers.filter(filter.where) : containers;
}

function sameToleration(a: V1Toleration, b: V1Toleration): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.operator ?? 'Equal') === (b.operator ?? 'Equal') &&
    (a.value ?? '') === (b.value ?? '') &&
    (a.effect ?? '') === (b.effect ?? '') &&
    a.tolerationSeconds === b.tolerationSeconds
  );
}

/** Adds `toleration` to every pod spec that lacks an equal one (operator Equal is the default). */
export function addToleration<T extends AnyObject>(object: T, toleration: V1Toleration): T {
  for (const { spec } of workloadPodSpecs(object)) {
    spec.tolerations ??= [];
    if (!spec.tolerations.some((t) => sameToleration(t, toleration))) spec.tolerations.push(structuredClone(toleration));
  }
  return object;
}

/**
 * Sets environment variable `env.name` in every selected container: replaces a variable of that
 * name that differs, adds it when missing. kube-apiserver refuses changes to a running Pod's
 * containers (and to existing ephemeral containers): use it on CREATE, as the default rules of a
 * typed mutating webhook do.
 */
export function setEnvVar<T extends AnyObject>(object: T, env: V1EnvVar, filter?: ContainerFilter): T {
  for (const { container } of selected(object, filter)) {
    container.env ??= [];
    const index = container.env.findIndex((e) => e.name === env.name);
    if (index < 0) container.env.push(structuredClone(env));
    else if (JSON.stringify(container.env[index]) !== JSON.stringify(env)) container.env[index] = structuredClone(env);
  }
  return object;
}

/**
 * Adds `volume` to every pod spec that has no volume of its name (one that has keeps its own
 * definition) and, with `mount`, mounts it into every selected container that has no mount at
 * that path.
 */
export function addVolume<T extends AnyObject>(object: T, volume: V1Volume, mount?: Omit<V1VolumeMount, 'name'>, filter?: ContainerFilter): T {
  for (const { spec } of workloadPodSpecs(object)) {
    spec.volumes ??= [];
    if (!spec.volumes.some((v) => v.name === volume.name)) spec.volumes.push(structuredClone(volume));
  }
  if (!mount) return object;
  for (const { container } of selected(object, filter)) {
    container.volumeMounts ??= [];
    if (!container.volumeMounts.some((m) => m.mountPath === mount.mountPath)) container.volumeMounts.push({ name: volume.name, ...structuredClone(mount) });
  }
  return object;
}
