/**
 * kube-controller-manager's garbage collector, reduced to what the lifecycle tests need: an
 * object with ownerReferences none of whose owners exists any more is deleted (background
 * propagation), shortly after the change that orphaned it. An owner is absent when no object of
 * its kind and name exists or the one that does has another uid (a deleted and re-created owner
 * is a different owner). This is also true of an object created with a dangling reference: the
 * real collector deletes it too, which is how a writer that keeps naming a deleted owner ends up
 * fighting the collector. Owners of kinds the double does not serve count as present (the real
 * collector would ask discovery; the double cannot tell). Deletes are immediate, pods included
 * (no graceful deletion). The local cluster runs the full collector (local-cluster/garbage-collector.ts)
 * through the API instead: propagation policies, finalizers, partial owners.
 */
import { metaOf, type KubeObject, type OwnerReference } from './objects.js';
import type { ObjectStore } from './store.js';

function ownerExists(store: ObjectStore, dependent: KubeObject, ref: OwnerReference): boolean {
  const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0]! : '';
  const type = store.types.forKind(group, ref.kind);
  if (!type) return true;
  const namespace = type.namespaced ? dependent.metadata?.namespace : undefined;
  return store.get(type.key, namespace, ref.name)?.metadata?.uid === ref.uid;
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
    for (const { key: resource } of store.types.all()) {
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
