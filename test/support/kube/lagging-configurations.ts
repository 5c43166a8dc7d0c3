/**
 * A kube-apiserver whose informer cache of webhook configurations runs `lagMs` behind the store
 * (local-cluster/CONTRACT.md 6: each kube-apiserver calls webhooks as its own cache says, seconds
 * behind under load): the slowest kube-apiserver of a control plane, for tests of the grace the
 * server gives it. An admission caller built on the returned store calls what the configurations
 * said `lagMs` ago; everything else (namespaces) is read live.
 */
import type { ObjectStore, StoreEvent } from '../../../local-cluster/fake-apiserver/store.js';
import type { KubeObject } from '../../../local-cluster/fake-apiserver/objects.js';

const CONFIGURATIONS = ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'] as const;
type ConfigurationResource = (typeof CONFIGURATIONS)[number];

interface Version {
  /** performance.now() of the write. */
  at: number;
  objects: KubeObject[];
}

export interface LaggingStore {
  /** Hand to createAdmissionCaller as `api.store`. */
  store: ObjectStore;
  stop(): void;
}

export function laggingConfigurations(store: ObjectStore, lagMs: number): LaggingStore {
  const history = new Map<ConfigurationResource, Version[]>(CONFIGURATIONS.map((resource) => [resource, [{ at: Number.NEGATIVE_INFINITY, objects: store.list(resource) }]]));
  const stop = store.subscribe((event: StoreEvent) => {
    const versions = history.get(event.resource as ConfigurationResource);
    if (versions) versions.push({ at: performance.now(), objects: store.list(event.resource) });
  });
  /** What the cache holds now: the newest version written at least lagMs ago. */
  const cached = (resource: ConfigurationResource): KubeObject[] => {
    const versions = history.get(resource)!;
    const seen = performance.now() - lagMs;
    return [...versions].reverse().find((version) => version.at <= seen)!.objects;
  };
  const lagging = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'list') {
        return (resource: string, namespace?: string) =>
          (CONFIGURATIONS as readonly string[]).includes(resource) ? cached(resource as ConfigurationResource) : target.list(resource, namespace);
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: lagging, stop };
}
