/**
 * The garbage collector (pkg/controller/garbagecollector): an object whose ownerReferences all
 * point at owners that are gone (no object of that kind and name, or one with another uid) is
 * deleted in the background; one with some live owners loses only the dangling references. An
 * owner deleted with propagationPolicy Foreground (finalizer foregroundDeletion) goes after its
 * dependents; with Orphan (finalizer orphan) its dependents lose the reference and stay.
 * Owner kinds the double does not serve are left alone, as the real collector cannot resolve them.
 */
import type { KubeObject, ObjectStore, OwnerReference, StoreEvent } from '../fake-apiserver/index.js';
import { clone } from '../fake-apiserver/objects.js';
import { isNotFound, type ClusterClient } from './api-client.js';
import { WorkQueue, type SyncResult } from './work-queue.js';

interface Identity {
  resource: string;
  namespace?: string;
  name: string;
  uid: string;
}

const keyOf = (id: Identity): string => JSON.stringify([id.resource, id.namespace ?? '', id.name, id.uid]);
const parseKey = (key: string): Identity => {
  const [resource, namespace, name, uid] = JSON.parse(key) as string[];
  return { resource: resource ?? '', namespace: namespace === '' ? undefined : namespace, name: name ?? '', uid: uid ?? '' };
};

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '');

export class GarbageCollector {
  readonly #queue: WorkQueue;
  #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly client: ClusterClient,
    onError: (message: string) => void,
  ) {
    this.#queue = new WorkQueue('garbage-collector', (key) => this.attempt(parseKey(key)), onError);
  }

  start(): void {
    this.#unsubscribe = this.store.subscribe((event) => this.onEvent(event));
    for (const type of this.store.types.all()) for (const object of this.store.list(type.key)) this.enqueue(type.key, object);
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#queue.stop();
  }

  private enqueue(resource: string, object: KubeObject): void {
    const meta = object.metadata ?? {};
    this.#queue.add(keyOf({ resource, namespace: meta.namespace, name: meta.name ?? '', uid: meta.uid ?? '' }));
  }

  private onEvent(event: StoreEvent): void {
    const meta = event.object.metadata ?? {};
    if (event.type !== 'DELETED' && ((meta.ownerReferences ?? []).length > 0 || meta.deletionTimestamp)) this.enqueue(event.resource, event.object);
    if (event.type === 'DELETED' || meta.deletionTimestamp) {
      for (const dependent of this.dependentsOf(meta.uid ?? '')) this.enqueue(dependent.resource, dependent.object);
    }
  }

  private dependentsOf(uid: string): { resource: string; object: KubeObject }[] {
    const found: { resource: string; object: KubeObject }[] = [];
    const owned = (object: Readonly<KubeObject>): boolean => (object.metadata?.ownerReferences ?? []).some((ref) => ref.uid === uid);
    for (const type of this.store.types.all()) {
      for (const object of this.store.select(type.key, owned)) found.push({ resource: type.key, object });
    }
    return found;
  }

  /** The owner as it exists now: 'absent', 'unresolvable' (unknown kind), or the object. */
  private owner(ref: OwnerReference, dependentNamespace: string | undefined): KubeObject | 'absent' | 'unresolvable' {
    const type = this.store.types.forKind(groupOf(ref.apiVersion), ref.kind);
    if (!type) return 'unresolvable';
    const owner = this.store.get(type.key, type.namespaced ? dependentNamespace : undefined, ref.name);
    return owner && owner.metadata?.uid === ref.uid ? owner : 'absent';
  }

  private async attempt(id: Identity): Promise<SyncResult> {
    const object = this.store.get(id.resource, id.namespace, id.name);
    if (!object || object.metadata?.uid !== id.uid) return;
    const finalizers = object.metadata?.finalizers ?? [];
    if (object.metadata?.deletionTimestamp && finalizers.includes('orphan')) return this.orphanDependents(id, object);
    if (object.metadata?.deletionTimestamp && finalizers.includes('foregroundDeletion')) return this.deleteDependentsFirst(id, object);
    const refs = object.metadata?.ownerReferences ?? [];
    if (refs.length === 0) return;
    const states = refs.map((ref) => ({ ref, owner: this.owner(ref, id.namespace) }));
    if (states.some((s) => s.owner === 'unresolvable')) return;
    const solid = states.filter((s) => typeof s.owner === 'object' && !(s.owner.metadata?.deletionTimestamp && (s.owner.metadata.finalizers ?? []).includes('foregroundDeletion')));
    const waiting = states.filter((s) => typeof s.owner === 'object' && !solid.includes(s));
    if (solid.length > 0) {
      const dangling = states.filter((s) => s.owner === 'absent');
      if (dangling.length > 0) await this.setOwners(id, object, solid.concat(waiting).map((s) => s.ref));
      return;
    }
    // Every owner is gone, or being deleted in the foreground: the dependent goes (in the foreground too, then).
    const policy = waiting.length > 0 ? 'Foreground' : 'Background';
    try {
      await this.client.delete({ resource: id.resource, namespace: id.namespace, name: id.name }, { propagationPolicy: policy, uid: id.uid });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  private async setOwners(id: Identity, object: KubeObject, refs: OwnerReference[]): Promise<void> {
    const next = clone(object);
    next.metadata = { ...(next.metadata ?? {}), ownerReferences: refs };
    await this.client.update({ resource: id.resource, namespace: id.namespace, name: id.name }, next).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }

  private async removeFinalizer(id: Identity, finalizer: string): Promise<void> {
    const current = this.store.get(id.resource, id.namespace, id.name);
    if (!current) return;
    const next = clone(current);
    next.metadata = { ...(next.metadata ?? {}), finalizers: (current.metadata?.finalizers ?? []).filter((f) => f !== finalizer) };
    await this.client.update({ resource: id.resource, namespace: id.namespace, name: id.name }, next);
  }

  private async orphanDependents(id: Identity, owner: KubeObject): Promise<SyncResult> {
    for (const dependent of this.dependentsOf(owner.metadata?.uid ?? '')) {
      const meta = dependent.object.metadata ?? {};
      const refs = (meta.ownerReferences ?? []).filter((ref) => ref.uid !== owner.metadata?.uid);
      await this.setOwners({ resource: dependent.resource, namespace: meta.namespace, name: meta.name ?? '', uid: meta.uid ?? '' }, dependent.object, refs);
    }
    await this.removeFinalizer(id, 'orphan');
  }

  private async deleteDependentsFirst(id: Identity, owner: KubeObject): Promise<SyncResult> {
    const dependents = this.dependentsOf(owner.metadata?.uid ?? '');
    for (const dependent of dependents) {
      if (dependent.object.metadata?.deletionTimestamp) continue;
      const meta = dependent.object.metadata ?? {};
      await this.client
        .delete({ resource: dependent.resource, namespace: meta.namespace, name: meta.name ?? '' }, { propagationPolicy: 'Foreground', uid: meta.uid })
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
    }
    const blocking = dependents.filter((d) => (d.object.metadata?.ownerReferences ?? []).some((ref) => ref.uid === owner.metadata?.uid && ref.blockOwnerDeletion));
    if (blocking.length > 0) return { requeueAfterMs: 500 };
    await this.removeFinalizer(id, 'foregroundDeletion');
  }
}
