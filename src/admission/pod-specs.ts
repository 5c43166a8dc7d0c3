import type { KubeObject } from './types.js';

/** A plain JSON object as it arrives on the wire: nothing about its fields is known yet. */
/** A JSON object as parsed: any field, unknown values. */
export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where in an object a pod spec lives, said the way a user reads it. */
export interface PodSpecLocation {
  /** "" for a Pod itself, e.g. "pod template of Deployment \"web\"" otherwise. */
  description: string;
  /** The pod spec itself (a live reference into the object: mutating rules edit it in place). */
  spec: JsonRecord;
  /** The metadata of the pod (template); created when a mutating rule asks for it. */
  metadata: () => JsonRecord;
}

/** Path from the object to its pod template, per kind that carries one. */
const TEMPLATE_PATHS: Record<string, readonly string[]> = {
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  ReplicationController: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
  PodTemplate: ['template'],
};

/** Where each workload kind keeps its pod template (its `spec` is the pod spec), as podSpecsOf reads it. */
export const POD_TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = TEMPLATE_PATHS;

/** The kinds podSpecsOf understands besides Pod. */
export const WORKLOAD_KINDS: readonly string[] = Object.keys(TEMPLATE_PATHS);

function objectLabel(object: KubeObject): string {
  const name = object.metadata?.name ?? object.metadata?.generateName;
  return name ? `${object.kind} "${name}"` : String(object.kind);
}

function childRecord(parent: JsonRecord, key: string): JsonRecord {
  const existing = parent[key];
  if (isRecord(existing)) return existing;
  const created: JsonRecord = {};
  parent[key] = created;
  return created;
}

/**
 * The pod specs inside `object`: the Pod's own spec, or the pod template of a workload
 * (Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job: spec.template;
 * CronJob: spec.jobTemplate.spec.template; PodTemplate: template). Empty for anything else.
 */
export function podSpecsOf(object: KubeObject | null | undefined): PodSpecLocation[] {
  if (!isRecord(object)) return [];
  if (object.kind === 'Pod') {
    const spec = object['spec'];
    if (!isRecord(spec)) return [];
    return [{ description: '', spec, metadata: () => childRecord(object, 'metadata') }];
  }
  const path = typeof object.kind === 'string' ? TEMPLATE_PATHS[object.kind] : undefined;
  if (!path) return [];
  let template: unknown = object;
  for (const key of path) template = isRecord(template) ? template[key] : undefined;
  if (!isRecord(template) || !isRecord(template['spec'])) return [];
  const podTemplate = template;
  return [
    {
      description: `pod template of ${objectLabel(object)}`,
      spec: podTemplate['spec'] as JsonRecord,
      metadata: () => childRecord(podTemplate, 'metadata'),
    },
  ];
}

/** Which list of a pod spec a container is in. */
export type ContainerKind = 'container' | 'init container' | 'ephemeral container';

/** A container of a pod spec, with its list and index (for messages and patches). */
export interface ContainerRef {
  kind: ContainerKind;
  /** The container object (a live reference). */
  container: JsonRecord;
  name: string;
}

const CONTAINER_LISTS: readonly [string, ContainerKind][] = [
  ['initContainers', 'init container'],
  ['containers', 'container'],
  ['ephemeralContainers', 'ephemeral container'],
];

/** Every container of a pod spec: init containers, containers, then ephemeral containers. */
export function containersOf(spec: JsonRecord): ContainerRef[] {
  const found: ContainerRef[] = [];
  for (const [field, kind] of CONTAINER_LISTS) {
    const list = spec[field];
    if (!Array.isArray(list)) continue;
    list.forEach((container: unknown, index) => {
      if (!isRecord(container)) return;
      const name = typeof container['name'] === 'string' ? container['name'] : `#${index}`;
      found.push({ kind, container, name });
    });
  }
  return found;
}

/** `container "app"`, or `init container "setup" in pod template of Deployment "web"`. */
export function describeContainer(ref: ContainerRef, location: PodSpecLocation): string {
  const base = `${ref.kind} "${ref.name}"`;
  return location.description ? `${base} in ${location.description}` : base;
}
