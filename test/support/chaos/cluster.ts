/**
 * The install under test: the API test double with a Deployment, and replicas of the compiled
 * server in files mode, each a Pod of the Deployment with its own mounted Secret volume. A replica
 * joins the Service once ready and leaves it when signalled; a stopped one is replaced by a new
 * Pod, as the ReplicaSet would. Every process's memory and descriptors are sampled while it lives.
 */
import type { Cleanups } from '../kube/cluster-harness.js';
import { ClusterHarness, FAST_LEASE, NAME, NAMESPACE, type Replica } from '../kube/cluster-harness.js';
import type { KubeObject } from '../../../local-cluster/fake-apiserver/index.js';
import { EXIT_MARGIN_MS } from '../deadline.js';
import { sampleProcess, type ProcessSample } from './process-stats.js';
import { MountedSecretRotator } from './rotator.js';
import { ServiceModel } from './service.js';
import { leaseHolder } from './invariants.js';

export type ReplicaRole = 'registering' | 'serving-only';

export interface ShutdownRecord {
  podName: string;
  signal: 'SIGTERM' | 'SIGKILL';
  wasLeader: boolean;
  ms: number;
  /** SIGTERM: --shutdown-delay + --shutdown-timeout; the exit must come within it plus EXIT_MARGIN_MS. */
  deadlineMs: number;
  code: number | null;
  /** The outcome of each shutdown step, from the server's summary line. */
  steps?: unknown;
  /** The teardown decision the server logged (it must keep the configurations). */
  teardown?: string;
}

export interface ProcessRecord {
  podName: string;
  role: ReplicaRole;
  pid: number;
  startedAtMs: number;
  endedAtMs?: number;
  samples: ProcessSample[];
}

export interface ClusterOptions {
  shutdownTimeoutMs: number;
  /** Extra environment for every replica (lease timing, log level). */
  env: Record<string, string>;
}

export interface ReplicaFailure {
  podName: string;
  atMs: number;
  kind: 'failed to start' | 'crashed';
  detail: string;
}

interface Member {
  replica: Replica;
  record: ProcessRecord;
}

const SLACK_MS = EXIT_MARGIN_MS;
/** Starts of one replacement before the run gives up on it. */
const MAX_STARTS = 3;

export class ChaosCluster {
  readonly service: ServiceModel;
  readonly processes: ProcessRecord[] = [];
  readonly shutdowns: ShutdownRecord[] = [];
  readonly #members = new Map<string, Member>();
  readonly #starting = new Set<Promise<string>>();
  readonly #stopping = new Set<string>();
  /** Replicas that failed to start or exited on their own: each one is a failure of the run. */
  readonly failures: ReplicaFailure[] = [];
  #pods = 0;

  private constructor(
    readonly harness: ClusterHarness,
    readonly rotator: MountedSecretRotator,
    private readonly cleanups: Cleanups,
    private readonly options: ClusterOptions,
    private readonly origin: number,
  ) {
    this.service = new ServiceModel(harness.api);
  }

  static async start(cleanups: Cleanups, options: ClusterOptions, replicas: number): Promise<ChaosCluster> {
    const harness = await ClusterHarness.start(cleanups);
    harness.seedDeployment([], replicas);
    const cluster = new ChaosCluster(harness, await MountedSecretRotator.create(harness.dir), cleanups, options, performance.now());
    cleanups.teardown(() => cluster.service.close());
    return cluster;
  }

  get api() {
    return this.harness.api;
  }

  /** ms since the cluster started: the report's time axis. */
  now(): number {
    return performance.now() - this.origin;
  }

  /**
   * Creates a Pod of the Deployment and starts its server; resolves once it is ready and in the
   * Service. A start that fails is recorded and tried again with a new Pod, as a ReplicaSet would.
   */
  async addReplica(role: ReplicaRole): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const podName = `kas-${++this.#pods}`;
      try {
        return await this.#startPod(podName, role);
      } catch (error) {
        this.failures.push({ podName, atMs: Math.round(this.now()), kind: 'failed to start', detail: String(error instanceof Error ? error.message : error).slice(0, 800) });
        this.rotator.unmount(podName);
        this.api.store.delete('pods', NAMESPACE, podName);
        if (attempt >= MAX_STARTS) throw error;
      }
    }
  }

  async #startPod(podName: string, role: ReplicaRole): Promise<string> {
    this.#createPod(podName);
    const certDir = await this.rotator.mount(podName);
    const args = ['--tls-mode', 'files', '--cert-dir', certDir, ...(role === 'serving-only' ? ['--no-register'] : [])];
    // Fast lease timing: leader loss and takeover are among the faults (scenario.ts assumes 3 s).
    const env = { ...FAST_LEASE, SHUTDOWN_TIMEOUT: `${this.options.shutdownTimeoutMs}ms`, WATCH_POLL_INTERVAL: '1s', ...this.options.env };
    const replica = await this.harness.startReplica(this.cleanups, podName, args, env);
    const record: ProcessRecord = { podName, role, pid: replica.child.process.pid ?? -1, startedAtMs: this.now(), samples: [] };
    this.processes.push(record);
    this.#members.set(podName, { replica, record });
    this.service.add(podName, replica.port);
    void replica.child.exited.then((exit) => this.#exitedUnasked(podName, exit.code));
    return podName;
  }

  /** A replica that exits without being signalled has crashed: out of the Service, on the record. */
  #exitedUnasked(podName: string, code: number | null): void {
    const member = this.#members.get(podName);
    if (!member || this.#stopping.has(podName)) return;
    const lastLogs = member.replica.child.logs.slice(-3).map((l) => l.msg).join(' | ');
    this.failures.push({ podName, atMs: Math.round(this.now()), kind: 'crashed', detail: `exit ${code}; ${lastLogs}; ${member.replica.child.stderr.slice(-300)}` });
    this.service.remove(podName, Promise.resolve());
    member.record.endedAtMs = this.now();
    this.#members.delete(podName);
  }

  /** A new Pod for one that went away, as the ReplicaSet would: starts now, awaited by settle(). */
  replaceInBackground(): void {
    const starting = this.addReplica('registering');
    this.#starting.add(starting);
    starting.then(
      () => this.#starting.delete(starting),
      () => undefined, // settle() reports it
    );
  }

  /** Resolves once every replacement is ready; rejects when one failed to start. */
  async settle(): Promise<void> {
    const starting = [...this.#starting];
    this.#starting.clear();
    await Promise.all(starting);
  }

  #createPod(podName: string): void {
    const replicaSet = this.api.store.list('replicasets', NAMESPACE)[0] as KubeObject;
    this.api.store.put('pods', {
      metadata: {
        name: podName,
        namespace: NAMESPACE,
        labels: { app: NAME },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: replicaSet.metadata!.name!, uid: replicaSet.metadata!.uid!, controller: true }],
      },
      spec: { containers: [{ name: 'server', image: 'kas' }] },
    } as KubeObject);
  }

  /** Live replicas of a role, oldest first. */
  live(role?: ReplicaRole): string[] {
    return this.service.live().filter((pod) => role === undefined || this.#members.get(pod)?.record.role === role);
  }

  leader(): string | undefined {
    const holder = leaseHolder(this.api.store);
    return this.live().includes(holder) ? holder : undefined;
  }

  ports(): number[] {
    return this.live().map((pod) => this.#members.get(pod)!.replica.port);
  }

  /** Signals a replica (out of the Service first), waits for its exit and records how it went; the Pod goes too. */
  async stopReplica(podName: string, signal: 'SIGTERM' | 'SIGKILL'): Promise<ShutdownRecord> {
    const member = this.#members.get(podName);
    if (!member) throw new Error(`no replica ${podName}`);
    const wasLeader = leaseHolder(this.api.store) === podName;
    this.#stopping.add(podName);
    this.service.remove(podName, member.replica.child.exited);
    const exit = await member.replica.child.stop(signal, this.options.shutdownTimeoutMs + EXIT_MARGIN_MS + 10_000);
    const logs = member.replica.child.logs;
    const summary = logs.find((l) => l.msg === 'shutdown complete' || l.msg === 'shutdown finished with problems');
    const decision = logs.find((l) => l.msg === 'keeping the webhook configurations' || l.msg === 'deleting the webhook configurations');
    const record: ShutdownRecord = {
      podName,
      signal,
      wasLeader,
      ms: Math.round(exit.ms),
      deadlineMs: this.options.shutdownTimeoutMs + SLACK_MS,
      code: exit.code,
      ...(summary ? { steps: summary['steps'] } : {}),
      ...(decision ? { teardown: `${decision.msg}: ${String(decision['why'])}` } : {}),
    };
    this.shutdowns.push(record);
    member.record.endedAtMs = this.now();
    this.#members.delete(podName);
    this.rotator.unmount(podName);
    this.api.store.delete('pods', NAMESPACE, podName);
    return record;
  }

  /**
   * One sample of every live process. The driver keeps only the lifecycle log lines: one line
   * per review would make the driver itself grow for the length of a soak.
   */
  async sample(): Promise<void> {
    await Promise.all(
      [...this.#members.values()].map(async ({ record, replica }) => {
        const kept = replica.child.logs.filter((line) => line.msg !== 'admission review');
        replica.child.logs.splice(0, replica.child.logs.length, ...kept);
        replica.child.stdout = '';
        const sample = await sampleProcess(record.pid, this.now());
        if (sample) record.samples.push(sample);
      }),
    );
  }

  /** SIGTERM to every replica still running (the Service may already be closed). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#members.keys()].map((pod) => this.stopReplica(pod, 'SIGTERM')));
  }
}
