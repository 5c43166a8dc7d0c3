/**
 * One Pod on the local node, from binding to removal: a pod IP, the volumes, the service
 * account's credentials, then the container as a process, restarted per restartPolicy with
 * CrashLoopBackOff, probed, and its status written back (phase, conditions, containerStatuses,
 * podIP). Deletion (deletionTimestamp) stops it as kubelet does: SIGTERM (the readiness probe
 * still runs, so Ready follows what the container answers), and SIGKILL when
 * deletionGracePeriodSeconds runs out; then the Pod object is removed (the delete made again at
 * every status sync until it lands, as kubelet's status manager does).
 * One container per Pod runs; init and sidecar containers are not supported.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeObject } from '../../fake-apiserver/index.js';
import { kubeTime } from '../../fake-apiserver/objects.js';
import { renderKubeconfig } from '../../util/kubeconfig.js';
import { unhookedNode } from '../../util/unhooked-node.js';
import { ApiError, isConflict, isNotFound } from '../api-client.js';
import { rec, records, specOf } from '../workload-objects.js';
import { ContainerConfigError, containerEnvironment, expand } from './container-env.js';
import { commandLine, mountsOf, translatePath } from './container-runtime.js';
import type { LocalImage } from './images.js';
import type { ContainerLog } from './container-logs.js';
import type { KubeletDeps } from './kubelet-deps.js';
import { ContainerProber, type ProbeKind } from './probes.js';
import { STATUS_SYNC_PERIOD_MS, StatusSync, type StatusWriteOutcome } from './status-sync.js';
import { MountError, PodVolumes } from './volumes.js';

type Json = Record<string, unknown>;

const BACKOFF_START_MS = 10_000;
const BACKOFF_CAP_MS = 300_000;
/** A container that ran this long starts its next backoff from the beginning. */
const BACKOFF_RESET_MS = 600_000;
const RETRY_MS = 2000;
/** The scheduler's binding retried after an API outage or a 5xx: 1 s doubling to this. */
const BIND_RETRY_CAP_MS = 10_000;
/** The kubelet's minimum grace period for a pod deleted with grace 0 that still runs. */
const MINIMUM_GRACE_SECONDS = 2;

type ContainerState =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | { terminated: { exitCode: number; reason: string; signal?: number; startedAt: string; finishedAt: string; containerID?: string } };

const SIGNALS: Record<string, number> = { SIGKILL: 9, SIGTERM: 15, SIGINT: 2 };

export class PodWorker {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  #pod: KubeObject;
  #podIp = '';
  /** What the container's image runs here (LocalImages), once resolved. */
  #image: LocalImage | undefined;
  #volumes: PodVolumes | undefined;
  #token: string | undefined;
  #process: ChildProcess | undefined;
  #exited: Promise<void> | undefined;
  #prober: ContainerProber | undefined;
  #state: ContainerState = { waiting: { reason: 'ContainerCreating' } };
  #lastState: ContainerState | undefined;
  #restartCount = 0;
  #startTime: string | undefined;
  #scheduledAt = kubeTime();
  #terminating = false;
  #terminated: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  readonly #statusSync = new StatusSync(() => this.writeStatusOnce());
  #readySince: string | undefined;
  #sigtermAt: number | undefined;
  #graceSeconds: number | undefined;
  #processStartedAt = 0;
  /** The node is going away: stop the process, leave the Pod object. */
  #nodeShutdown = false;
  /** Resolves when the Pod is gone and everything it held is released. */
  readonly done: Promise<void>;

  constructor(
    private readonly deps: KubeletDeps,
    pod: KubeObject,
  ) {
    this.#pod = pod;
    this.namespace = pod.metadata?.namespace ?? '';
    this.name = pod.metadata?.name ?? '';
    this.uid = pod.metadata?.uid ?? '';
    this.done = this.run().catch((error: unknown) => this.deps.log(`pod ${this.namespace}/${this.name}: ${(error as Error).message}`));
  }

  private get container(): Json {
    return records(specOf(this.#pod).containers)[0] ?? {};
  }

  private get podDir(): string {
    return join(this.deps.dir, 'pods', `${this.namespace}_${this.name}_${this.uid}`);
  }

  /** A newer version of the Pod: deletion starts the termination. */
  update(pod: KubeObject): void {
    if (pod.metadata?.uid !== this.uid) return;
    this.#pod = pod;
    if (pod.metadata?.deletionTimestamp && !this.#terminating) this.terminate(Number(pod.metadata.deletionGracePeriodSeconds ?? 30));
  }

  /** The Pod object is gone (a forced delete): stop what still runs. */
  removed(): void {
    if (!this.#terminating) this.terminate(0);
    else this.#wake?.();
  }

  /** The kubelet stops: the process is stopped, the Pod object stays (a node shutdown). */
  shutdown(graceSeconds: number): void {
    this.#nodeShutdown = true;
    if (!this.#terminating) this.terminate(graceSeconds);
    else this.#wake?.();
  }

  /** A ConfigMap or Secret changed: its volumes are rewritten after the kubelet's sync delay for this Pod. */
  refreshVolumesLater(kind: 'configmaps' | 'secrets', name: string): void {
    if (!this.#volumes?.uses(kind, name)) return;
    const delayMs = this.deps.volumeSyncDelayMs();
    if (delayMs <= 0) {
      void this.refreshVolumes(kind, name);
      return;
    }
    setTimeout(() => void this.refreshVolumes(kind, name), delayMs).unref();
  }

  /** Rewrites the volumes that use the object from what the API holds now (never an older version). */
  async refreshVolumes(kind: 'configmaps' | 'secrets', name: string): Promise<void> {
    if (!this.#volumes?.uses(kind, name) || this.#terminating) return;
    await this.#volumes.refresh().catch((error: unknown) => this.event('Warning', 'FailedMount', (error as Error).message));
  }

  private event(type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.deps.events.record(this.#pod, type, reason, message);
  }

  private async sleepOrTerminate(ms: number): Promise<void> {
    if (this.#terminating) return;
    await this.sleepUntilWoken(ms);
  }

  /** Sleeps `ms`, or until a termination, the Pod object's removal or the node's shutdown wakes it. */
  private async sleepUntilWoken(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
  }

  private async run(): Promise<void> {
    await this.bind();
    const resolution = await this.deps.images.resolve(String(this.container.image ?? ''));
    if ('unresolved' in resolution) {
      this.#state = { waiting: { reason: 'NotRunLocally', message: resolution.unresolved } };
      await this.writeStatus();
      await this.sleepOrTerminate(2 ** 31 - 1);
      return this.finish();
    }
    this.#image = resolution.image;
    while (!this.#terminating && !(await this.prepare())) await this.sleepOrTerminate(RETRY_MS);
    while (!this.#terminating) {
      const ranMs = await this.runContainerOnce();
      if (this.#terminating) break;
      if (String(specOf(this.#pod).restartPolicy ?? 'Always') === 'Never') break;
      const backoff = ranMs >= BACKOFF_RESET_MS ? BACKOFF_START_MS : Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** Math.max(0, this.#restartCount - 1));
      this.#state = { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${Math.round(backoff / 1000)}s restarting failed container=${String(this.container.name)} pod=${this.name}_${this.namespace}(${this.uid})` } };
      this.event('Warning', 'BackOff', 'Back-off restarting failed container');
      await this.writeStatus();
      await this.sleepOrTerminate(backoff);
    }
    await this.#terminated;
    await this.finish();
  }

  /**
   * The scheduler's binding to this node (there is one node and no scheduler), retried with
   * backoff through an API outage or a 5xx as the scheduler requeues a Pod, until it lands or the
   * Pod is deleted.
   */
  private async bind(): Promise<void> {
    const binding = { metadata: { name: this.name, namespace: this.namespace }, target: { apiVersion: 'v1', kind: 'Node', name: this.deps.nodeName } };
    for (let attempt = 0; !specOf(this.#pod).nodeName && !this.#terminating; attempt++) {
      try {
        await this.deps.scheduler.createSubresource({ resource: 'pods', namespace: this.namespace, name: this.name }, 'binding', binding);
        this.event('Normal', 'Scheduled', `Successfully assigned ${this.namespace}/${this.name} to ${this.deps.nodeName}`);
        return;
      } catch (error) {
        if (!retryable(error)) throw error;
        const delayMs = Math.min(BIND_RETRY_CAP_MS, 1000 * 2 ** attempt);
        this.deps.log(`pod ${this.namespace}/${this.name}: binding: ${error.message}; again in ${delayMs} ms`);
        await this.sleepOrTerminate(delayMs);
      }
    }
  }

  /** IP, volumes, credentials; false (after an event) when something is missing and worth a retry. */
  private async prepare(): Promise<boolean> {
    try {
      if (this.#podIp === '') {
        const ports = records(this.container.ports).map((p) => Number(p.containerPort ?? 0));
        this.#podIp = await this.deps.network.allocate(ports);
        this.#startTime = kubeTime();
        await this.writeStatus();
      }
      this.#volumes ??= new PodVolumes(this.#pod, this.podDir, {
        configMap: (ns, name) => this.deps.client.get({ resource: 'configmaps', namespace: ns, name }),
        secret: (ns, name) => this.deps.client.get({ resource: 'secrets', namespace: ns, name }),
        serviceAccountToken: () => this.serviceAccountToken(),
      });
      await this.#volumes.setUp();
      return true;
    } catch (error) {
      if (error instanceof MountError) {
        this.event('Warning', 'FailedMount', `MountVolume.SetUp failed: ${error.message}`);
      } else {
        this.event('Warning', 'FailedCreatePodSandBox', (error as Error).message);
      }
      return false;
    }
  }

  private serviceAccountToken(): string {
    const account = String(specOf(this.#pod).serviceAccountName ?? 'default');
    this.#token ??= this.deps.issueToken(this.namespace, account);
    return this.#token;
  }

  /** In a Pod, client-go reads /var/run/secrets/kubernetes.io/serviceaccount; here the same credentials come as a kubeconfig. */
  private async serviceAccountEnv(): Promise<Record<string, string>> {
    if (specOf(this.#pod).automountServiceAccountToken === false) return {};
    const dir = join(this.podDir, 'serviceaccount');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, 'kubeconfig');
    await writeFile(path, renderKubeconfig({ ...this.deps.apiTarget, token: this.serviceAccountToken() }, { namespace: this.namespace, name: 'in-cluster' }), { mode: 0o600 });
    return { KUBECONFIG: path };
  }

  /** The image's ENV, but for what names places in its file system (PATH, HOME): this machine's stand. */
  private imageEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const entry of this.#image?.env ?? []) {
      const at = entry.indexOf('=');
      const key = at < 0 ? entry : entry.slice(0, at);
      if (key !== 'PATH' && key !== 'HOME') env[key] = at < 0 ? '' : entry.slice(at + 1);
    }
    return env;
  }

  /** The environment before the container's own: the image's, the runtime's and the kubelet's. */
  private async baseEnv(): Promise<Record<string, string>> {
    const home = join(this.podDir, 'home');
    await mkdir(home, { recursive: true });
    return {
      ...this.imageEnv(),
      PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
      HOSTNAME: this.name,
      HOME: home,
      NODE_ENV: 'production',
      // A pod's :: (every address) is its own network namespace; here the process binds its pod IP.
      WEBHOOK_HOST: this.#podIp,
      ...(await this.serviceAccountEnv()),
    };
  }

  /** Runs the container once; returns how long it ran. */
  private async runContainerOnce(): Promise<number> {
    const container = this.container;
    const mounts = mountsOf(container, (volume) => this.#volumes?.hostPath(volume) ?? '');
    let env: Record<string, string>;
    try {
      const own = containerEnvironment(this.#pod, container, {
        configMap: (ns, name) => this.deps.client.get({ resource: 'configmaps', namespace: ns, name }),
        secret: (ns, name) => this.deps.client.get({ resource: 'secrets', namespace: ns, name }),
      }, {});
      // Only the container's own values name paths inside the container.
      for (const [key, value] of Object.entries(own)) own[key] = translatePath(value, mounts);
      env = { ...(await this.baseEnv()), ...own };
    } catch (error) {
      if (!(error instanceof ContainerConfigError)) throw error;
      this.#state = { waiting: { reason: 'CreateContainerConfigError', message: error.message } };
      this.event('Warning', 'Failed', `Error: ${error.message}`);
      await this.writeStatus();
      await this.sleepOrTerminate(RETRY_MS);
      return 0;
    }
    const command = commandLine(container, this.#image!);
    if ('error' in command) {
      this.#state = { waiting: { reason: 'CreateContainerError', message: command.error } };
      this.event('Warning', 'Failed', `Error: ${command.error}`);
      await this.writeStatus();
      await this.sleepOrTerminate(BACKOFF_CAP_MS);
      return 0;
    }
    const argv = command.argv.map((arg, i) => (i === command.script ? arg : translatePath(expand(arg, env), mounts)));
    const log = this.deps.logs.newRun(this.namespace, this.name, String(container.name ?? ''));
    const startedAt = kubeTime();
    const started = performance.now();
    this.#processStartedAt = Date.now();
    this.#sigtermAt = undefined;
    this.#graceSeconds = undefined;
    // Only the env the container is given: a test runner's hooks stay out (see unhookedNode).
    const node = unhookedNode(argv);
    const child = spawn(node.command, node.args, { cwd: command.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#process = child;
    const exit = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    this.#exited = exit.then(() => undefined);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => log.append(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => log.append(chunk));
    this.event('Normal', 'Started', `Started container ${String(container.name ?? '')}`);
    this.#state = { running: { startedAt } };
    this.#prober = new ContainerProber(container, this.#podIp, {
      changed: () => void this.writeStatus(),
      kill: (kind, message) => void this.killForProbe(kind, message),
      unhealthy: (_kind: ProbeKind, message) => this.event('Warning', 'Unhealthy', message),
    }, this.deps.slowStart);
    this.#prober.start();
    await this.writeStatus();
    const [code, signal] = await exit;
    this.#prober.stop();
    this.#process = undefined;
    this.endRun(log, code, signal, startedAt, child.pid ?? -1);
    await this.writeStatus();
    return performance.now() - started;
  }

  private endRun(log: ContainerLog, code: number | null, signal: NodeJS.Signals | null, startedAt: string, pid: number): void {
    log.end();
    const exitCode = code ?? 128 + (SIGNALS[signal ?? ''] ?? 0);
    const terminated: ContainerState = {
      terminated: {
        exitCode,
        reason: exitCode === 0 ? 'Completed' : 'Error',
        ...(signal ? { signal: SIGNALS[signal] ?? 0 } : {}),
        startedAt,
        finishedAt: kubeTime(),
      },
    };
    const lastLines = exitCode === 0 ? '' : log.read(5);
    const tail = lastLines === '' ? '' : `; its last lines:\n${lastLines}`;
    this.deps.log(`pod ${this.namespace}/${this.name}: container exited with ${signal ? `signal ${signal}` : `code ${String(code)}`}${tail}`);
    this.deps.exits.push({
      namespace: this.namespace,
      pod: this.name,
      code,
      signal,
      terminating: this.#terminating,
      pid,
      startedAt: this.#processStartedAt,
      ...(this.#sigtermAt === undefined ? {} : { sigtermAt: this.#sigtermAt, graceSeconds: this.#graceSeconds }),
      exitedAt: Date.now(),
      ...(lastLines === '' ? {} : { lastLines }),
    });
    this.#lastState = terminated;
    this.#state = terminated;
    if (!this.#terminating) this.#restartCount += 1;
  }

  private async killForProbe(kind: ProbeKind, message: string): Promise<void> {
    this.event('Normal', 'Killing', `Container ${String(this.container.name)} failed ${kind} probe, will be restarted`);
    this.deps.log(`pod ${this.namespace}/${this.name}: ${kind} probe failed (${message}), restarting the container`);
    await this.stopProcess(Number(specOf(this.#pod).terminationGracePeriodSeconds ?? 30));
  }

  /** SIGTERM, then SIGKILL once `graceSeconds` have passed. */
  private async stopProcess(graceSeconds: number): Promise<void> {
    const child = this.#process;
    if (!child || !this.#exited) return;
    if (!this.#terminating) this.#prober?.stop();
    this.deps.log(`pod ${this.namespace}/${this.name}: SIGTERM (grace ${Math.max(MINIMUM_GRACE_SECONDS, graceSeconds)} s)`);
    this.#sigtermAt = Date.now();
    this.#graceSeconds = Math.max(MINIMUM_GRACE_SECONDS, graceSeconds);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), Math.max(MINIMUM_GRACE_SECONDS, graceSeconds) * 1000);
    await this.#exited;
    clearTimeout(timer);
  }

  private terminate(graceSeconds: number): void {
    this.#terminating = true;
    this.#wake?.();
    // Readiness goes on being probed while the container shuts down: its Ready condition (and the
    // EndpointSlice's `serving`) follow the probe; `ready` in the slice is false from now on.
    this.#prober?.terminating();
    if (this.#process) this.event('Normal', 'Killing', `Stopping container ${String(this.container.name ?? '')}`);
    this.#terminated = (async () => {
      await this.writeStatus();
      await this.stopProcess(graceSeconds);
    })();
  }

  /** Releases everything and removes the Pod object (the kubelet's final delete, grace 0). */
  private async finish(): Promise<void> {
    await this.#terminated;
    await this.#statusSync.settled;
    this.#statusSync.stop();
    await this.#volumes?.remove();
    await rm(this.podDir, { recursive: true, force: true });
    if (this.#token) this.deps.revokeToken(this.#token);
    if (this.#podIp) this.deps.network.release(this.#podIp);
    // kubelet's status manager deletes a terminated Pod at every sync until the delete lands (an
    // API outage, a 5xx): giving up would leave the object terminating for good.
    while (!this.#nodeShutdown && this.podObjectLeft()) {
      const outcome = await this.deleteOnce();
      if (outcome === 'landed') return;
      await this.sleepUntilWoken(STATUS_SYNC_PERIOD_MS);
    }
  }

  /** The final delete (grace 0, this uid); `failed` when the API did not take it and a later sync may. */
  private async deleteOnce(): Promise<StatusWriteOutcome> {
    try {
      await this.deps.client.delete({ resource: 'pods', namespace: this.namespace, name: this.name }, { gracePeriodSeconds: 0, uid: this.uid });
      return 'landed';
    } catch (error) {
      if (isNotFound(error) || isConflict(error)) return 'landed';
      if (!retryable(error)) throw error;
      this.deps.log(`pod ${this.namespace}/${this.name}: final delete: ${error.message}; again at the next sync`);
      return 'failed';
    }
  }

  private podObjectLeft(): boolean {
    return this.deps.client.get({ resource: 'pods', namespace: this.namespace, name: this.name })?.metadata?.uid === this.uid;
  }

  /** The Pod's status from what the worker knows, written as one merge patch, in order (again later if it did not land). */
  private writeStatus(): Promise<void> {
    return this.#statusSync.sync();
  }

  private async writeStatusOnce(): Promise<StatusWriteOutcome> {
    if (this.#nodeShutdown) return 'landed';
    if (!this.deps.client.get({ resource: 'pods', namespace: this.namespace, name: this.name })) return 'landed';
    try {
      await this.deps.client.mergePatch({ resource: 'pods', namespace: this.namespace, name: this.name }, { status: this.status() }, 'status');
      return 'landed';
    } catch (error) {
      if (isNotFound(error)) return 'landed';
      this.deps.log(`pod ${this.namespace}/${this.name}: status: ${(error as Error).message}`);
      return 'failed';
    }
  }

  private status(): Json {
    const now = kubeTime();
    const running = 'running' in this.#state;
    const ready = running && (this.#prober?.ready ?? false);
    const started = running && (this.#prober?.started ?? false);
    if (ready && this.#readySince === undefined) this.#readySince = now;
    if (!ready) this.#readySince = undefined;
    const condition = (type: string, status: boolean, since = this.#scheduledAt): Json => ({ type, status: status ? 'True' : 'False', lastProbeTime: null, lastTransitionTime: since });
    const containerStatus: Json = {
      name: this.container.name,
      state: this.#state,
      lastState: this.#lastState && !('terminated' in this.#state && this.#state === this.#lastState) ? this.#lastState : {},
      ready,
      restartCount: this.#restartCount,
      image: this.container.image,
      imageID: '',
      started,
      ...(this.#process?.pid ? { containerID: `process://${this.#process.pid}` } : {}),
    };
    const phase = running || this.#restartCount > 0 ? 'Running' : 'Pending';
    return {
      phase,
      conditions: [
        condition('PodReadyToStartContainers', this.#podIp !== ''),
        condition('Initialized', true),
        condition('Ready', ready, this.#readySince ?? now),
        condition('ContainersReady', ready, this.#readySince ?? now),
        condition('PodScheduled', true),
      ],
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      ...(this.#podIp ? { podIP: this.#podIp, podIPs: [{ ip: this.#podIp }] } : {}),
      ...(this.#startTime ? { startTime: this.#startTime } : {}),
      containerStatuses: [containerStatus],
      qosClass: qosClassOf(this.container),
    };
  }
}

/** What an API outage, a restart or a shed request answers: worth trying again. */
const retryable = (error: unknown): error is ApiError => error instanceof ApiError && (error.status >= 500 || error.status === 429);

function qosClassOf(container: Json): string {
  const resources = rec(container.resources);
  const requests = rec(resources.requests);
  const limits = rec(resources.limits);
  if (Object.keys(requests).length === 0 && Object.keys(limits).length === 0) return 'BestEffort';
  const guaranteed = ['cpu', 'memory'].every((r) => limits[r] !== undefined && (requests[r] === undefined || String(requests[r]) === String(limits[r])));
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
