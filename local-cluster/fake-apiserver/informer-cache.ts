/**
 * One kube-apiserver's informer cache of some resources (contract 6a): a copy of the store that
 * its watch events reach after a propagation lag, in order. With no lag an event is applied as
 * the store emits it (the simple default); with a lag each event waits `lagMs` from the moment it
 * happened, and never overtakes an earlier one (an informer delivers in order, so a shorter lag
 * set later still waits behind events already queued).
 */
import { clone, type KubeObject } from './objects.js';
import type { ResourceName } from './resources.js';
import type { ObjectStore, StoreEvent } from './store.js';

const keyOf = (object: KubeObject): string => `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

interface Pending {
  dueAt: number;
  event: StoreEvent;
}

export class InformerCache {
  readonly #store: ObjectStore;
  readonly #resources: ReadonlySet<ResourceName>;
  readonly #objects = new Map<ResourceName, Map<string, KubeObject>>();
  readonly #pending: Pending[] = [];
  #lagMs = 0;
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #revision = 0;
  readonly #listeners = new Set<(event: StoreEvent) => void>();

  constructor(store: ObjectStore, resources: readonly ResourceName[]) {
    this.#store = store;
    this.#resources = new Set(resources);
  }

  get lagMs(): number {
    return this.#lagMs;
  }

  /** Events from now on reach the cache `lagMs` after they happen (behind any still queued). */
  setLag(lagMs: number): void {
    if (!Number.isFinite(lagMs) || lagMs < 0) throw new Error(`lag must be 0 or more milliseconds, got ${lagMs}`);
    this.#lagMs = lagMs;
  }

  /** Goes up whenever what the cache holds changes: what is derived from it is rebuilt then. */
  get revision(): number {
    return this.#revision;
  }

  /** Called with each event as the cache applies it (after its lag); returns the unsubscribe function. */
  onApplied(listener: (event: StoreEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Lists every resource afresh and watches from there (an informer's start). */
  start(): void {
    this.stop();
    this.#revision += 1;
    for (const resource of this.#resources) {
      this.#objects.set(resource, new Map(this.#store.list(resource).map((object) => [keyOf(object), object])));
    }
    this.#unsubscribe = this.#store.subscribe((event) => this.#receive(event));
  }

  /** Stops watching and forgets everything, queued events included (a restart loses them). */
  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending.length = 0;
    this.#objects.clear();
    this.#revision += 1;
  }

  /** Sorted by namespace and name, as a lister returns them; only `namespace`'s when given. */
  list(resource: ResourceName, namespace?: string): KubeObject[] {
    const bucket = this.#objects.get(resource);
    if (!bucket) return [];
    const entries = [...bucket.entries()].filter(([, object]) => namespace === undefined || object.metadata?.namespace === namespace);
    return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, object]) => clone(object));
  }

  get(resource: ResourceName, namespace: string | undefined, name: string): KubeObject | undefined {
    const found = this.#objects.get(resource)?.get(`${namespace ?? ''}/${name}`);
    return found ? clone(found) : undefined;
  }

  /** Events received but not yet applied. */
  get backlog(): number {
    return this.#pending.length;
  }

  #receive(event: StoreEvent): void {
    if (!this.#resources.has(event.resource)) return;
    if (this.#lagMs === 0 && this.#pending.length === 0) {
      this.#apply(event);
      return;
    }
    const previous = this.#pending.at(-1)?.dueAt ?? 0;
    this.#pending.push({ dueAt: Math.max(previous, performance.now() + this.#lagMs), event });
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer) return;
    const head = this.#pending[0];
    if (!head) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const now = performance.now();
      while (this.#pending[0] && this.#pending[0].dueAt <= now + 1) this.#apply(this.#pending.shift()!.event);
      this.#schedule();
    }, Math.max(0, head.dueAt - performance.now()));
    this.#timer.unref();
  }

  #apply(event: StoreEvent): void {
    const bucket = this.#objects.get(event.resource);
    if (!bucket) return;
    if (event.type === 'DELETED') bucket.delete(keyOf(event.object));
    else bucket.set(keyOf(event.object), event.object);
    this.#revision += 1;
    for (const listener of this.#listeners) listener(event);
  }
}
