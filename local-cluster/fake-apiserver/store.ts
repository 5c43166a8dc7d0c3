/**
 * The object store: one resourceVersion counter for everything (like etcd), system metadata
 * (uid, resourceVersion, generation, creationTimestamp, managedFields), and watch events.
 * REST handlers validate before they commit; tests may seed and change objects directly.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { clone, kubeTime, metaOf, type KubeObject } from './objects.js';
import { deadlineSignal } from '../util/waits.js';
import { labelNamespace } from './builtin-types.js';
import { apiVersionOf, type ResourceName, type ResourceType } from './resources.js';
import { TypeRegistry } from './type-registry.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: WatchEventType;
  resource: ResourceName;
  object: KubeObject;
  resourceVersion: number;
}

export interface WriteOrigin {
  manager?: string;
  operation?: 'Update' | 'Apply';
}

/** System fields decided before the write (the validating webhooks of a CREATE already saw them). */
export interface PresetSystemFields {
  uid?: string;
  creationTimestamp?: string;
}

type Listener = (event: StoreEvent) => void;

const HISTORY_LIMIT = 5000;

function keyOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

function managedFieldsEntry(type: ResourceType, origin: WriteOrigin): unknown[] {
  return [
    {
      manager: origin.manager ?? 'unknown',
      operation: origin.operation ?? 'Update',
      apiVersion: apiVersionOf(type),
      time: kubeTime(),
      fieldsType: 'FieldsV1',
      fieldsV1: {},
    },
  ];
}

export class ObjectStore {
  /** The types served, built-in and from CustomResourceDefinitions. */
  readonly types = new TypeRegistry();
  private revision = 1;
  private readonly objects = new Map<ResourceName, Map<string, KubeObject>>();
  private readonly history: StoreEvent[] = [];
  private readonly listeners = new Set<Listener>();

  /** The latest resourceVersion handed out, as a number. */
  get currentRevision(): number {
    return this.revision;
  }

  /** The oldest resourceVersion a watch can still resume from. */
  get oldestWatchableRevision(): number {
    return this.history[0]?.resourceVersion ?? this.revision;
  }

  private bucket(resource: ResourceName): Map<string, KubeObject> {
    let bucket = this.objects.get(resource);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(resource, bucket);
    }
    return bucket;
  }

  private emit(type: WatchEventType, resource: ResourceName, object: KubeObject): void {
    const event: StoreEvent = { type, resource, object: clone(object), resourceVersion: this.revision };
    this.history.push(event);
    if (this.history.length > HISTORY_LIMIT) this.history.shift();
    for (const listener of this.listeners) listener(event);
  }

  private nextRevision(): string {
    this.revision += 1;
    return String(this.revision);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events after `revision` for one resource, oldest first. */
  eventsSince(resource: ResourceName, revision: number): StoreEvent[] {
    return this.history.filter((e) => e.resource === resource && e.resourceVersion > revision);
  }

  get(resource: ResourceName, namespace: string | undefined, name: string): KubeObject | undefined {
    const found = this.bucket(resource).get(keyOf(this.types.get(resource).namespaced ? namespace : undefined, name));
    return found ? clone(found) : undefined;
  }

  /** Sorted by namespace, then name (etcd key order). `namespace` undefined: all namespaces. */
  list(resource: ResourceName, namespace?: string): KubeObject[] {
    return this.select(resource, () => true, namespace);
  }

  /**
   * As list, only the objects `match` accepts. `match` reads the stored objects themselves, so
   * only the matches are copied: a scan of every kind (the garbage collector's for dependents)
   * stays cheap with large objects such as CRDs about. It must not change what it reads.
   */
  select(resource: ResourceName, match: (object: Readonly<KubeObject>) => boolean, namespace?: string): KubeObject[] {
    return [...this.bucket(resource).entries()]
      .filter(([, object]) => (namespace === undefined || object.metadata?.namespace === namespace) && match(object))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, object]) => clone(object));
  }

  /** Stores a new object: fills uid, resourceVersion, creationTimestamp, generation. */
  create(resource: ResourceName, input: KubeObject, origin: WriteOrigin = {}, preset: PresetSystemFields = {}): KubeObject {
    const type = this.types.get(resource);
    const object = clone(input);
    object.apiVersion = apiVersionOf(type);
    object.kind = type.kind;
    const meta = metaOf(object);
    if (!type.namespaced) delete meta.namespace;
    const key = keyOf(meta.namespace, meta.name ?? '');
    if (this.bucket(resource).has(key)) throw new Error(`${resource} ${key} already exists`);
    meta.uid = preset.uid ?? randomUUID();
    meta.creationTimestamp = preset.creationTimestamp ?? kubeTime();
    if (type.generationField || type.generationChanged) meta.generation = 1;
    else delete meta.generation;
    delete meta.deletionTimestamp;
    meta.managedFields = managedFieldsEntry(type, origin);
    meta.resourceVersion = this.nextRevision();
    this.bucket(resource).set(key, object);
    this.emit('ADDED', resource, object);
    return clone(object);
  }

  /** Replaces a stored object; keeps uid and creationTimestamp, bumps generation on a spec change. */
  update(resource: ResourceName, input: KubeObject, origin: WriteOrigin = {}): KubeObject {
    const type = this.types.get(resource);
    const object = clone(input);
    object.apiVersion = apiVersionOf(type);
    object.kind = type.kind;
    const meta = metaOf(object);
    const key = keyOf(type.namespaced ? meta.namespace : undefined, meta.name ?? '');
    const old = this.bucket(resource).get(key);
    if (!old) throw new Error(`${resource} ${key} not found`);
    const oldMeta = metaOf(old);
    meta.uid = oldMeta.uid;
    meta.creationTimestamp = oldMeta.creationTimestamp;
    if (type.generationField || type.generationChanged) {
      const changed = type.generationChanged
        ? type.generationChanged(old, object)
        : !isDeepStrictEqual(old[type.generationField ?? ''], object[type.generationField ?? '']);
      meta.generation = (oldMeta.generation ?? 1) + (changed ? 1 : 0);
    }
    if (oldMeta.deletionTimestamp !== undefined) {
      meta.deletionTimestamp = oldMeta.deletionTimestamp;
      meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    }
    meta.managedFields = origin.manager ? managedFieldsEntry(type, origin) : oldMeta.managedFields;
    meta.resourceVersion = this.nextRevision();
    this.bucket(resource).set(key, object);
    this.emit('MODIFIED', resource, object);
    return clone(object);
  }

  /** Removes an object; the DELETED event carries it with a fresh resourceVersion. */
  delete(resource: ResourceName, namespace: string | undefined, name: string): KubeObject | undefined {
    const key = keyOf(this.types.get(resource).namespaced ? namespace : undefined, name);
    const bucket = this.bucket(resource);
    const object = bucket.get(key);
    if (!object) return undefined;
    bucket.delete(key);
    metaOf(object).resourceVersion = this.nextRevision();
    this.emit('DELETED', resource, object);
    return clone(object);
  }

  // ---- test-side helpers: no validation, metadata still maintained ----

  /** Creates or replaces, for seeding. Namespaces get their kubernetes.io/metadata.name label. */
  put(resource: ResourceName, object: KubeObject): KubeObject {
    const copy = clone(object);
    if (resource === 'namespaces') labelNamespace(copy);
    const meta = metaOf(copy);
    const existing = this.get(resource, meta.namespace, meta.name ?? '');
    return existing ? this.update(resource, copy, { manager: 'test' }) : this.create(resource, copy, { manager: 'test' });
  }

  createNamespace(name: string, labels: Record<string, string> = {}): KubeObject {
    return this.put('namespaces', { metadata: { name, labels } });
  }

  /** Sets spec.replicas (and status.replicas) of a Deployment, as `kubectl scale` would. */
  scaleDeployment(namespace: string, name: string, replicas: number): KubeObject {
    const deployment = this.require('deployments', namespace, name);
    const spec = (deployment.spec ?? {}) as Record<string, unknown>;
    deployment.spec = { ...spec, replicas };
    deployment.status = { ...((deployment.status ?? {}) as Record<string, unknown>), replicas };
    return this.update('deployments', deployment);
  }

  /**
   * Sets metadata.deletionTimestamp, as a delete with finalizers pending (grace 0) or a graceful
   * delete (the time the grace period ends) does. A later, shorter grace period moves it closer.
   */
  markDeleting(resource: ResourceName, namespace: string | undefined, name: string, graceSeconds = 0): KubeObject {
    const object = this.require(resource, namespace, name);
    const meta = metaOf(object);
    const current = meta.deletionGracePeriodSeconds;
    if (meta.deletionTimestamp === undefined || current === undefined || graceSeconds < current) {
      meta.deletionTimestamp = kubeTime(new Date(Date.now() + graceSeconds * 1000));
      meta.deletionGracePeriodSeconds = graceSeconds;
    }
    const bucket = this.bucket(resource);
    const key = keyOf(this.types.get(resource).namespaced ? namespace : undefined, name);
    meta.resourceVersion = this.nextRevision();
    bucket.set(key, object);
    this.emit('MODIFIED', resource, object);
    return clone(object);
  }

  /** Every object of a type goes (its CustomResourceDefinition was deleted), each with a DELETED event. */
  dropAll(resource: ResourceName): void {
    for (const object of this.list(resource)) this.delete(resource, object.metadata?.namespace, object.metadata?.name ?? '');
  }

  private require(resource: ResourceName, namespace: string | undefined, name: string): KubeObject {
    const object = this.get(resource, namespace, name);
    if (!object) throw new Error(`${resource} ${namespace ?? ''}/${name} not found`);
    return object;
  }

  /**
   * Resolves with the object (or undefined) once `predicate` holds for it; rejects at the deadline
   * or when `signal` aborts. Checks now, then on every change of that resource.
   */
  async waitFor(
    resource: ResourceName,
    namespace: string | undefined,
    name: string,
    predicate: (object: KubeObject | undefined) => boolean,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<KubeObject | undefined> {
    const deadline = deadlineSignal(options.timeoutMs, options.signal);
    const current = (): KubeObject | undefined => this.get(resource, namespace, name);
    if (predicate(current())) return current();
    return new Promise((resolve, reject) => {
      const unsubscribe = this.subscribe((event) => {
        if (event.resource !== resource) return;
        const object = current();
        if (predicate(object)) finish(() => resolve(object));
      });
      const onAbort = (): void =>
        finish(() => reject(new Error(`waitFor ${resource} ${namespace ?? ''}/${name}: ${String(deadline.reason)}`)));
      const finish = (settle: () => void): void => {
        unsubscribe();
        deadline.removeEventListener('abort', onAbort);
        settle();
      };
      deadline.addEventListener('abort', onAbort, { once: true });
    });
  }
}
