/**
 * kube-controller-manager for the local cluster: the Deployment, ReplicaSet, endpoints,
 * disruption, namespace and ValidatingAdmissionPolicy status controllers fed by the store's events (an informer each), each with its work queue,
 * and the garbage collector.
 */
import type { FakeApiServer, StoreEvent } from '../fake-apiserver/index.js';
import { ClusterClient, isNotFound } from './api-client.js';
import { DeploymentController } from './deployment-controller.js';
import { DisruptionController } from './disruption-controller.js';
import { EndpointsController } from './endpoints-controller.js';
import { EventRecorder } from './events.js';
import { GarbageCollector } from './garbage-collector.js';
import { NAMESPACE_DELETION_GRACE_MS, NamespaceController } from './namespace-controller.js';
import { PolicyStatusController } from './policy-status-controller.js';
import { ReplicaSetController } from './replicaset-controller.js';
import { WorkQueue } from './work-queue.js';
import { controllerRef } from './workload-objects.js';

const CONTROLLER_USER = { username: 'system:kube-controller-manager', groups: ['system:masters', 'system:authenticated'] };

const nsKey = (namespace: string | undefined, name: string | undefined): string => `${namespace ?? ''}/${name ?? ''}`;
const splitKey = (key: string): [string, string] => {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
};

export class ControllerManager {
  readonly #queues: WorkQueue[] = [];
  readonly #gc: GarbageCollector;
  #unsubscribe: (() => void) | undefined;
  readonly #deployments: WorkQueue;
  readonly #replicaSets: WorkQueue;
  readonly #endpoints: WorkQueue;
  readonly #namespaces: WorkQueue;
  readonly #disruption: WorkQueue;
  readonly #policyStatus: WorkQueue;
  readonly #budgets: DisruptionController;

  constructor(
    private readonly api: FakeApiServer,
    log: (message: string) => void,
  ) {
    const client = new ClusterClient(api, CONTROLLER_USER);
    const deployments = new DeploymentController(client, new EventRecorder(client, 'deployment-controller'));
    const replicaSets = new ReplicaSetController(client, new EventRecorder(client, 'replicaset-controller'));
    const endpoints = new EndpointsController(client);
    const namespaces = new NamespaceController(client);
    this.#budgets = new DisruptionController(client);
    this.#deployments = this.queue('deployment', (key) => deployments.sync(...splitKey(key)), log);
    this.#replicaSets = this.queue('replicaset', (key) => replicaSets.sync(...splitKey(key)), log);
    this.#endpoints = this.queue('endpoints', (key) => endpoints.sync(...splitKey(key)), log);
    this.#namespaces = this.queue('namespace', (key) => namespaces.sync(key), log);
    this.#disruption = this.queue('disruption', (key) => this.#budgets.sync(...splitKey(key)), log);
    const policyStatus = new PolicyStatusController(client);
    this.#policyStatus = this.queue('validatingadmissionpolicy-status', (key) => policyStatus.sync(key), log);
    this.#gc = new GarbageCollector(api.store, client, log);
  }

  private queue(name: string, sync: ConstructorParameters<typeof WorkQueue>[1], log: (message: string) => void): WorkQueue {
    // An object deleted while its controller worked on it: nothing left to do.
    const tolerant: typeof sync = (key) =>
      sync(key).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    const queue = new WorkQueue(name, tolerant, log);
    this.#queues.push(queue);
    return queue;
  }

  start(): void {
    this.#unsubscribe = this.api.store.subscribe((event) => this.route(event));
    const store = this.api.store;
    for (const d of store.list('deployments')) this.#deployments.add(nsKey(d.metadata?.namespace, d.metadata?.name));
    for (const rs of store.list('replicasets')) this.#replicaSets.add(nsKey(rs.metadata?.namespace, rs.metadata?.name));
    for (const s of store.list('services')) this.#endpoints.add(nsKey(s.metadata?.namespace, s.metadata?.name));
    for (const n of store.list('namespaces')) this.#namespaces.add(n.metadata?.name ?? '');
    for (const pdb of store.list('poddisruptionbudgets')) this.#disruption.add(nsKey(pdb.metadata?.namespace, pdb.metadata?.name));
    for (const policy of store.list('validatingadmissionpolicies')) this.#policyStatus.add(policy.metadata?.name ?? '');
    this.#gc.start();
  }

  /** Each event to the controllers that watch that kind, and to the owner's controller. */
  private route(event: StoreEvent): void {
    const meta = event.object.metadata ?? {};
    const owner = controllerRef(event.object);
    switch (event.resource) {
      case 'deployments':
        this.#deployments.add(nsKey(meta.namespace, meta.name));
        this.requeueBudgets(meta.namespace);
        break;
      case 'poddisruptionbudgets':
        this.#disruption.add(nsKey(meta.namespace, meta.name));
        break;
      case 'replicasets':
        this.requeueBudgets(meta.namespace);
        this.#replicaSets.add(nsKey(meta.namespace, meta.name));
        if (owner?.kind === 'Deployment') this.#deployments.add(nsKey(meta.namespace, owner.name));
        break;
      case 'pods':
        if (owner?.kind === 'ReplicaSet') this.#replicaSets.add(nsKey(meta.namespace, owner.name));
        for (const service of this.api.store.list('services', meta.namespace)) this.#endpoints.add(nsKey(meta.namespace, service.metadata?.name));
        for (const budget of this.#budgets.budgetsFor(event.object)) this.#disruption.add(nsKey(meta.namespace, budget));
        break;
      case 'services':
        this.#endpoints.add(nsKey(meta.namespace, meta.name));
        break;
      case 'validatingadmissionpolicies':
        if (event.type !== 'DELETED') this.#policyStatus.add(meta.name ?? '');
        break;
      case 'namespaces':
        if (meta.deletionTimestamp) this.#namespaces.addAfter(meta.name ?? '', NAMESPACE_DELETION_GRACE_MS);
        break;
      default:
        break;
    }
  }

  /** A scale changed: every budget of the namespace may expect another count. */
  private requeueBudgets(namespace: string | undefined): void {
    for (const pdb of this.api.store.list('poddisruptionbudgets', namespace)) this.#disruption.add(nsKey(namespace, pdb.metadata?.name));
  }

  stop(): void {
    this.#unsubscribe?.();
    for (const queue of this.#queues) queue.stop();
    this.#gc.stop();
  }
}
