/**
 * CustomResourceDefinitions in the store: the store keeps each CRD's objects under its storage
 * version's type while the CRD exists (a CRD removed from the store directly takes its objects
 * with it), and apiextensions' controllers run (crd-controllers.ts). What each kube-apiserver
 * serves follows its own cache of the CRDs (kube-apiservers.ts, custom-resource-types.ts).
 */
import { CrdControllers } from './crd-controllers.js';
import { storageType } from './custom-resource-types.js';
import type { ObjectStore, StoreEvent } from './store.js';

const CRDS = 'customresourcedefinitions';

/** Keeps the store's types in step with its CRDs and runs the CRD controllers; returns the stop function. */
export function serveCustomResources(store: ObjectStore, options: { finalizers: boolean }): () => void {
  const registered = new Map<string, string>();
  const apply = (event: StoreEvent): void => {
    if (event.resource !== CRDS) return;
    const name = event.object.metadata?.name ?? '';
    const previous = registered.get(name);
    if (event.type === 'DELETED') {
      if (previous) {
        store.dropAll(previous);
        store.types.remove(previous);
        registered.delete(name);
      }
      return;
    }
    const type = storageType(event.object);
    if (!type) return;
    if (previous && previous !== type.key) store.types.remove(previous);
    store.types.add(type);
    registered.set(name, type.key);
  };
  for (const crd of store.list(CRDS)) apply({ type: 'ADDED', resource: CRDS, object: crd, resourceVersion: 0 });
  const unsubscribe = store.subscribe(apply);
  const controllers = new CrdControllers(store, options.finalizers);
  controllers.start();
  return () => {
    unsubscribe();
    controllers.stop();
  };
}
