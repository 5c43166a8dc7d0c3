/**
 * kube-controller-manager's garbage collector, reduced to what the lifecycle tests need: an
 * object with ownerReferences none of whose owners exists any more is deleted (background
 * propagation), shortly after the change that orphaned it. An owner is absent when no object of
 * its kind and name exists or the one that does has another uid (a deleted and re-created owner
 * is a different owner). This is also true of an object created with a dangling reference: the
 * real collector deletes it too, which is how a writer that keeps naming a deleted owner ends up
 * fighting the collector. Owners of kinds the double does not serve count as present (the real
 * collector would ask discovery; the double cannot tell). Deletes are immediate, pods included
 * (no graceful deletion).
 */
import { metaOf, type KubeObject, type OwnerReference } from './objects.js';
import { RESOURCE_TYPES, type ResourceName } from './resources.js';
import type { ObjectStore } from './store.js';

const RESOURCE_BY_OWNER = new Map<string, ResourceName>(
  Object.values(RESOURCE_TYPES).map((type) => [`${type.group}/${type.kind}`, type.resource]),
);

function ownerResource(ref: OwnerReference): ResourceName | undefined {
  const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0]! : '';
  return RESOURCE_BY_OWNER.get(`${group}/${ref.kind}`);
}

function ownerExists(store: ObjectStore, dependent: KubeObject, ref: OwnerReference): boolean {
  const resource = ownerResource(ref);
  if (!resource) return true;
  const namespace = RESOURCE_TYPES[resource].namespaced ? dependent.metadata?.namespace : undefined;
  return store.get(resource, namespace, ref.name)?.metadata?.uid === ref.uid;
}

export interface GarbageCollector {
  /** Objects the collector deleted, in order: `resource namespace/name`. */
  readonly collected: readonly string[];
  stop(): void;
}

/** Watches the store and collects orphans `delayMs` after each change (the real one is asynchronous too). */
export function startGarbageCollector(store: ObjectStore, delayMs = 20): GarbageCollector {
  const collected: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const sweep = (): void => {
    timer = undefined;
    for (const resource of Object.keys(RESOURCE_TYPES) as ResourceName[]) {
      for (const object of store.list(resource)) {
        const refs = metaOf(object).ownerReferences ?? [];
        if (refs.length === 0 || refs.some((ref) => ownerExists(store, object, ref))) continue;
        store.delete(resource, object.metadata?.namespace, object.metadata?.name ?? '');
        collected.push(`${resource} ${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`);
      }
    }
  };
  const unsubscribe = store.subscribe(() => {
    timer ??= setTimeout(sweep, delayMs);
  });
  return {
    collected,
    stop: () => {
      unsubscribe();
      clearTimeout(timer);
    },
  };
}
