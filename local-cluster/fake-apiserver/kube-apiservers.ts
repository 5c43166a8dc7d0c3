/**
 * The control plane's kube-apiservers (contract 6a): several over one store, behind one address
 * as behind a TCP load balancer. Each has its own informer cache of webhook configurations and
 * namespaces (what its admission reads) and of the RBAC objects (what its authorizer reads, for
 * SubjectAccessReviews), with a propagation lag of its own, and its own
 * connections: a client connection is handed to one kube-apiserver when it opens and stays with
 * it, and a restart of that kube-apiserver cuts its connections and watches, drops its caches and
 * (through its incarnation) the admission caller's connection pools, and lists afresh. Its cache
 * of CustomResourceDefinitions decides which custom resources it serves (apiextensions' crdHandler
 * reads its own lister): a CRD created a moment ago is a 404 on a lagging one, and a deleted CRD
 * ends the watches on its resource when it reaches that one's cache.
 */
import type { Socket } from 'node:net';
import { sleep } from '../util/waits.js';
import { servedTypes as crdServedTypes } from './custom-resource-types.js';
import { InformerCache } from './informer-cache.js';
import type { KubeObject } from './objects.js';
import type { RbacObjects } from './store-rbac.js';
import type { ObjectStore } from './store.js';
import type { TypeRegistry } from './type-registry.js';
import type { WatchStream } from './watch.js';
import { paramsFromStore, type AdmissionSource, type ParamObjects, type WebhookConfigurationResource } from './write-admission.js';

export interface KubeApiServerOptions {
  /** How long a store change takes to reach this kube-apiserver's informer caches (default 0). */
  lagMs?: number;
}

/** One kube-apiserver of the control plane, as a test drives it. */
export interface KubeApiServer extends AdmissionSource {
  /** 0, 1, 2, ... in the order configured. */
  readonly index: number;
  /** The propagation lag now in force (a spike included). */
  readonly lagMs: number;
  /** Store changes not yet in its caches. */
  readonly backlog: number;
  /** Its usual lag from now on (an ongoing spike ends at its time, then this lag applies). */
  setLag(lagMs: number): void;
  /** For `durationMs`, changes reach its caches only after `lagMs` (a watch restart, a busy apiserver). */
  lagSpike(lagMs: number, durationMs: number): void;
  /**
   * Stops it (its client connections and watches cut, its caches and webhook connection pools
   * gone), waits `downMs` (default 0) or until `signal` aborts, whichever comes first, then starts
   * it again with freshly listed caches. Other kube-apiservers keep serving; new connections go to
   * them meanwhile.
   */
  restart(options?: { downMs?: number; signal?: AbortSignal }): Promise<void>;
}

const WEBHOOK_CONFIGURATIONS: readonly WebhookConfigurationResource[] = [
  'mutatingwebhookconfigurations',
  'validatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
];
const RBAC_RESOURCES = ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'];
const CRDS = 'customresourcedefinitions';

export class KubeApiServerInstance implements KubeApiServer {
  readonly index: number;
  readonly name: string;
  readonly sockets = new Set<Socket>();
  readonly watches = new Set<WatchStream>();
  readonly #store: ObjectStore;
  readonly #cache: InformerCache;
  #incarnation = 1;
  #up = true;
  #baseLagMs: number;
  #spikeTimer: NodeJS.Timeout | undefined;
  #served: { base: TypeRegistry; revision: number; types: TypeRegistry } | undefined;

  constructor(store: ObjectStore, index: number, options: KubeApiServerOptions = {}) {
    this.index = index;
    this.name = `kube-apiserver-${index}`;
    this.#store = store;
    this.#cache = new InformerCache(store, [...WEBHOOK_CONFIGURATIONS, 'namespaces', ...RBAC_RESOURCES, CRDS]);
    this.#baseLagMs = options.lagMs ?? 0;
    this.#cache.setLag(this.#baseLagMs);
    this.#cache.onApplied((event) => {
      // The CRD's storage is torn down: watches on its resource end (the cacher stops).
      if (event.resource === CRDS && event.type === 'DELETED') this.#endWatches(event.object.metadata?.name ?? '');
    });
    this.#cache.start();
  }

  /** `base`'s built-in types and the custom resources of the CRDs in its cache. */
  servedTypes(base: TypeRegistry): TypeRegistry {
    const revision = this.#cache.revision;
    if (this.#served?.base !== base || this.#served.revision !== revision) {
      this.#served = { base, revision, types: base.serving(this.#cache.list(CRDS).flatMap(crdServedTypes)) };
    }
    return this.#served.types;
  }

  #endWatches(resource: string): void {
    for (const watch of [...this.watches]) if (watch.resource === resource) watch.end();
  }

  get up(): boolean {
    return this.#up;
  }

  get incarnation(): number {
    return this.#incarnation;
  }

  get lagMs(): number {
    return this.#cache.lagMs;
  }

  get backlog(): number {
    return this.#cache.backlog;
  }

  configurations(resource: WebhookConfigurationResource): KubeObject[] {
    return this.#cache.list(resource);
  }

  /** From the cache, with a live read on a miss (the namespace lister's fallback). */
  namespace(name: string): KubeObject | undefined {
    return this.#cache.get('namespaces', undefined, name) ?? this.#store.get('namespaces', undefined, name);
  }

  params(apiVersion: string, kind: string, namespace: string): ParamObjects | undefined {
    return paramsFromStore(this.#store, apiVersion, kind, namespace);
  }

  /** The RBAC objects its authorizer sees: its cache, which lags the store as the rest of it does. */
  get rbac(): RbacObjects {
    return this.#cache;
  }

  setLag(lagMs: number): void {
    this.#baseLagMs = lagMs;
    if (!this.#spikeTimer) this.#cache.setLag(lagMs);
  }

  lagSpike(lagMs: number, durationMs: number): void {
    this.#cache.setLag(lagMs);
    if (this.#spikeTimer) clearTimeout(this.#spikeTimer);
    this.#spikeTimer = setTimeout(() => {
      this.#spikeTimer = undefined;
      this.#cache.setLag(this.#baseLagMs);
    }, durationMs);
    this.#spikeTimer.unref();
  }

  async restart(options: { downMs?: number; signal?: AbortSignal } = {}): Promise<void> {
    this.stop();
    // An aborted signal ends the down time early: the kube-apiserver comes back either way.
    await sleep(options.downMs ?? 0, options.signal).catch(() => undefined);
    this.start();
  }

  /** Takes a new client connection (the load balancer chose this one). */
  adopt(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  stop(): void {
    if (!this.#up) return;
    this.#up = false;
    for (const watch of [...this.watches]) watch.end();
    for (const socket of this.sockets) socket.destroy();
    this.#cache.stop();
  }

  start(): void {
    if (this.#up) return;
    this.#incarnation += 1;
    this.#cache.setLag(this.#spikeTimer ? this.#cache.lagMs : this.#baseLagMs);
    this.#cache.start();
    this.#up = true;
  }

  close(): void {
    if (this.#spikeTimer) clearTimeout(this.#spikeTimer);
    this.#cache.stop();
  }
}

/** The kube-apiservers and the load balancer in front of them. */
export class ControlPlane {
  readonly instances: readonly KubeApiServerInstance[];
  #next = 0;
  #accepted = 0;

  constructor(store: ObjectStore, options: readonly KubeApiServerOptions[]) {
    if (options.length === 0) throw new Error('a control plane needs at least one kube-apiserver');
    this.instances = options.map((entry, index) => new KubeApiServerInstance(store, index, entry));
  }

  /** The next kube-apiserver that is up, round robin; undefined when none is. */
  pick(): KubeApiServerInstance | undefined {
    for (let tried = 0; tried < this.instances.length; tried++) {
      const candidate = this.instances[this.#next % this.instances.length]!;
      this.#next = (this.#next + 1) % this.instances.length;
      if (candidate.up) return candidate;
    }
    return undefined;
  }

  /** Hands a new client connection to a kube-apiserver; destroys it when none is up. */
  assign(socket: Socket): void {
    const chosen = this.pick();
    if (!chosen) {
      socket.destroy();
      return;
    }
    chosen.adopt(socket);
    connectionOwners.set(socket, chosen);
    connectionNumbers.set(socket, ++this.#accepted);
  }

  /** Client connections accepted so far (TLS handshakes completed), across restarts. */
  get accepted(): number {
    return this.#accepted;
  }

  /** Which accepted connection `socket` is (1, 2, ...): the request log's `connection`. */
  connectionNumber(socket: Socket): number | undefined {
    return connectionNumbers.get(socket);
  }

  /** The kube-apiserver that holds `socket`, if it is still up. */
  serving(socket: Socket): KubeApiServerInstance | undefined {
    const owner = connectionOwners.get(socket);
    return owner?.up && owner.sockets.has(socket) ? owner : undefined;
  }

  close(): void {
    for (const instance of this.instances) instance.close();
  }
}

const connectionOwners = new WeakMap<Socket, KubeApiServerInstance>();
const connectionNumbers = new WeakMap<Socket, number>();
