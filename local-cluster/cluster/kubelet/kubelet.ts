/**
 * The local node's kubelet: registers the Node, runs a worker for every Pod (binding it to this
 * node, as the scheduler would), rewrites ConfigMap and Secret volumes when those objects change,
 * and serves `kubectl logs`. No containers: see container-runtime.ts for what runs and how.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FakeApiServer, KubeObject, StoreEvent } from '../../fake-apiserver/index.js';
import { serviceAccountUser } from '../../fake-apiserver/index.js';
import { kubeTime } from '../../fake-apiserver/objects.js';
import { ClusterClient } from '../api-client.js';
import { LocalImages } from './images.js';
import { EventRecorder } from '../events.js';
import { PodLogs } from './container-logs.js';
import { repositoryRoot } from '../../util/repository-root.js';
import type { ContainerExit, KubeletDeps } from './kubelet-deps.js';
import { PodNetwork } from './pod-network.js';
import { PodWorker } from './pod-worker.js';

export const NODE_NAME = 'local-node';
const NODE_USER = { username: `system:node:${NODE_NAME}`, groups: ['system:nodes', 'system:masters', 'system:authenticated'] };
const SCHEDULER_USER = { username: 'system:kube-scheduler', groups: ['system:masters', 'system:authenticated'] };

export interface KubeletOptions {
  api: FakeApiServer;
  /** Pod directories go below it. */
  dir: string;
  log: (message: string) => void;
  /**
   * Multiplies every startup probe's failureThreshold (default 1: the Pod's own). The compiled
   * server starts in seconds on an idle machine but took over two minutes at a load of 25 on two
   * cores, past the manifests' 60 s startup budget: a real node that slow would restart it too.
   * The tests allow for a busy machine with this, never by changing the manifests.
   */
  slowStart?: number;
  /** Fixes the pod network's /24 (`127.a.b.`); random by default. */
  podNetworkPrefix?: string;
  /**
   * How long after a ConfigMap or Secret change one Pod's volumes are rewritten, drawn per Pod and
   * change (default 0). A real kubelet rewrites them at the Pod's next periodic sync, up to a
   * minute or more later and at a different moment on every Pod: replicas see a change apart.
   */
  volumeSyncDelayMs?: () => number;
}

export class Kubelet {
  readonly logs = new PodLogs();
  readonly exits: ContainerExit[] = [];
  readonly network: PodNetwork;
  readonly #workers = new Map<string, PodWorker>();
  readonly #client: ClusterClient;
  readonly #deps: KubeletDeps;
  #unsubscribe: (() => void) | undefined;
  #stopping = false;

  constructor(private readonly options: KubeletOptions) {
    const api = options.api;
    this.#client = new ClusterClient(api, NODE_USER);
    this.network = new PodNetwork(options.podNetworkPrefix);
    const repoRoot = repositoryRoot();
    this.#deps = {
      client: this.#client,
      scheduler: new ClusterClient(api, SCHEDULER_USER),
      events: new EventRecorder(this.#client, 'kubelet'),
      network: this.network,
      logs: this.logs,
      dir: options.dir,
      nodeName: NODE_NAME,
      images: new LocalImages(repoRoot, join(options.dir, 'images')),
      apiTarget: { url: api.url, caPem: api.caPem },
      issueToken: (namespace, account) => api.issueToken(serviceAccountUser(namespace, account)),
      revokeToken: (token) => api.revokeToken(token),
      log: options.log,
      slowStart: options.slowStart ?? 1,
      exits: this.exits,
      volumeSyncDelayMs: options.volumeSyncDelayMs ?? (() => 0),
    };
  }

  async start(): Promise<void> {
    await mkdir(join(this.options.dir, 'pods'), { recursive: true });
    this.options.api.setPodLogs(this.logs);
    this.options.api.store.put('nodes', this.nodeObject());
    this.#unsubscribe = this.options.api.store.subscribe((event) => this.onEvent(event));
    for (const pod of this.options.api.store.list('pods')) this.ensureWorker(pod);
  }

  private nodeObject(): KubeObject {
    const now = kubeTime();
    return {
      metadata: { name: NODE_NAME, labels: { 'kubernetes.io/hostname': NODE_NAME, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' } },
      spec: {},
      status: {
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status (processes, no containers)', lastHeartbeatTime: now, lastTransitionTime: now }],
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: NODE_NAME }],
        capacity: { cpu: '2', memory: '8Gi', pods: '110' },
        allocatable: { cpu: '2', memory: '8Gi', pods: '110' },
        nodeInfo: { kubeletVersion: 'v1.33.0+local-kubelet', containerRuntimeVersion: `process://node-${process.version}`, operatingSystem: 'linux', architecture: process.arch === 'x64' ? 'amd64' : process.arch, kubeProxyVersion: '', osImage: 'local processes', kernelVersion: '', machineID: '', systemUUID: '', bootID: '' },
      },
    };
  }

  private onEvent(event: StoreEvent): void {
    if (event.resource === 'pods') {
      const uid = event.object.metadata?.uid ?? '';
      if (event.type === 'DELETED') this.#workers.get(uid)?.removed();
      else this.ensureWorker(event.object);
      return;
    }
    if (event.resource === 'configmaps' || event.resource === 'secrets') {
      const name = event.object.metadata?.name ?? '';
      for (const worker of this.#workers.values()) {
        if (worker.namespace === event.object.metadata?.namespace) worker.refreshVolumesLater(event.resource, name);
      }
    }
  }

  private ensureWorker(pod: KubeObject): void {
    const uid = pod.metadata?.uid ?? '';
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (nodeName && nodeName !== NODE_NAME) return;
    const existing = this.#workers.get(uid);
    if (existing) {
      existing.update(pod);
      return;
    }
    if (this.#stopping || pod.metadata?.deletionTimestamp) {
      // A Pod that never ran here and is being deleted goes at once.
      if (pod.metadata?.deletionTimestamp && !this.#stopping) {
        void this.#client.delete({ resource: 'pods', namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' }, { gracePeriodSeconds: 0, uid }).catch(() => undefined);
      }
      return;
    }
    const worker = new PodWorker(this.#deps, pod);
    this.#workers.set(uid, worker);
    void worker.done.then(() => {
      this.#workers.delete(uid);
      this.logs.forget(worker.namespace, worker.name);
    });
  }

  /** Stops every Pod's process (SIGTERM, SIGKILL after `graceSeconds`) without deleting the Pods. */
  async stop(graceSeconds: number): Promise<void> {
    this.#stopping = true;
    this.#unsubscribe?.();
    const workers = [...this.#workers.values()];
    for (const worker of workers) worker.shutdown(graceSeconds);
    await Promise.all(workers.map((w) => w.done));
  }
}
