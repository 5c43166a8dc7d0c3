/**
 * What a chaos run acts on and looks at: the local cluster (in this process), the install's names,
 * an administrator's client that retries through API outages as a person or a GitOps tool would,
 * waits that wake on the store's events, and the operation log with the run's time axis.
 */
import { ADMIN_USER, type KubeObject } from '../../../../local-cluster/fake-apiserver/index.js';
import { ApiError, ClusterClient, type ObjectRef } from '../../../../local-cluster/cluster/api-client.js';
import type { LocalCluster } from '../../../../local-cluster/cluster/index.js';
import { sleep } from '../../../../local-cluster/util/waits.js';

export const NS = 'kube-admission-server';
export const NAME = 'kube-admission-server';
export const LEASE = `${NAME}-leader`;
export const GENERATED_SECRET = `${NAME}-certs`;
export const POLICY_CONFIGMAP = `${NAME}-policy`;
export const SERVER_USER = `system:serviceaccount:${NS}:${NAME}`;
export const POD_SELECTOR = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/component': 'webhook' };
/** Where the load's Pods are created. */
export const LOAD_NAMESPACE = 'team-a';

export type TlsMode = 'generate' | 'files';

export interface LogLine {
  atMs: number;
  text: string;
}

/** Retries an administrator's request while the control plane is down (503 or no answer), up to `timeoutMs`. */
async function retrying<T>(what: string, call: () => Promise<T>, timeoutMs: number, signal: AbortSignal): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      const retryable = error instanceof ApiError ? error.status === 503 || error.status === 429 || error.status === 500 : true;
      if (!retryable || performance.now() > deadline || signal.aborted) throw new Error(`${what}: ${(error as Error).message}`);
      await sleep(250, signal);
    }
  }
}

/** What every view of one run's world shares: its log, its time axis, the administrator's client and the run's signal. */
interface Shared {
  log: LogLine[];
  origin: number;
  client: ClusterClient;
  runSignal: AbortSignal;
}

/** A wait in progress, for the report of an operation stopped at its bound. */
interface PendingWait {
  what: string;
  detail: () => string;
}

export class World {
  readonly log: LogLine[];
  readonly #origin: number;
  readonly #client: ClusterClient;
  /** The run's: the administrator's retries end with the run, not with an operation. */
  readonly #runSignal: AbortSignal;
  readonly #waits = new Set<PendingWait>();

  /** `signal` ends this view's waits and sleeps: the run's, or an operation's bound as well (within()). */
  constructor(
    readonly cluster: LocalCluster,
    readonly mode: TlsMode,
    readonly signal: AbortSignal,
    private readonly echo: (line: string) => void,
    shared?: Shared,
  ) {
    this.log = shared?.log ?? [];
    this.#origin = shared?.origin ?? performance.now();
    this.#client = shared?.client ?? new ClusterClient(cluster.api, ADMIN_USER);
    this.#runSignal = shared?.runSignal ?? signal;
  }

  /**
   * The same world for one operation: its waits and sleeps also end when `bound` aborts (its
   * bound passed). The administrator's requests keep their own two-minute retry, as a person's
   * kubectl would, so an operation stopped at its bound can still put back what it changed.
   */
  within(bound: AbortSignal): World {
    const shared = { log: this.log, origin: this.#origin, client: this.#client, runSignal: this.#runSignal };
    return new World(this.cluster, this.mode, AbortSignal.any([this.signal, bound]), this.echo, shared);
  }

  /** The waits in progress in this view, each with what it waited for and what it saw last. */
  pendingWaits(): string[] {
    return [...this.#waits].map((wait) => {
      const detail = wait.detail();
      return detail ? `${wait.what} (${detail})` : wait.what;
    });
  }

  get store() {
    return this.cluster.api.store;
  }

  /** ms since the run began: the report's time axis (performance.now() - origin). */
  now(): number {
    return performance.now() - this.#origin;
  }

  /** performance.now() of a run time. */
  at(runMs: number): number {
    return this.#origin + runMs;
  }

  note(text: string): void {
    const line = { atMs: Math.round(this.now()), text };
    this.log.push(line);
    this.echo(`${(line.atMs / 1000).toFixed(1).padStart(7)} s  ${text}`);
  }

  /** The administrator's client: every call retried through outages for up to two minutes. */
  admin = {
    get: (ref: ObjectRef): KubeObject | undefined => this.#client.get(ref),
    create: (resource: string, namespace: string | undefined, object: KubeObject) => retrying(`create ${resource}`, () => this.#client.create(resource, namespace, object), 120_000, this.#runSignal),
    update: (ref: ObjectRef, object: KubeObject, subresource?: string) => retrying(`update ${ref.resource}/${ref.name}`, () => this.#client.update(ref, object, subresource), 120_000, this.#runSignal),
    mergePatch: (ref: ObjectRef, patch: unknown, subresource?: string) => retrying(`patch ${ref.resource}/${ref.name}`, () => this.#client.mergePatch(ref, patch, subresource), 120_000, this.#runSignal),
    delete: (ref: ObjectRef, options?: Parameters<ClusterClient['delete']>[1]) =>
      retrying(`delete ${ref.resource}/${ref.name}`, async () => {
        try {
          await this.#client.delete(ref, options);
        } catch (error) {
          if (!(error instanceof ApiError && error.status === 404)) throw error;
        }
      }, 120_000, this.#runSignal),
    /** One POST to a subresource, not retried: the caller decides (an eviction's 429). */
    createSubresource: (ref: ObjectRef, subresource: string, body: unknown) => this.#client.createSubresource(ref, subresource, body),
  };

  /** The install's Pods (the Deployment's), oldest first. */
  pods(): KubeObject[] {
    return this.store
      .list('pods', NS)
      .filter((pod) => Object.entries(POD_SELECTOR).every(([k, v]) => pod.metadata?.labels?.[k] === v))
      .sort((a, b) => String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)));
  }

  deployment(): KubeObject | undefined {
    return this.store.get('deployments', NS, NAME);
  }

  leaseHolder(): string {
    const lease = this.store.get('leases', NS, LEASE) as { spec?: { holderIdentity?: string } } | undefined;
    return lease?.spec?.holderIdentity ?? '';
  }

  /**
   * Resolves once `condition` holds, tested now, on every store change and every 500 ms (some
   * conditions are about time); rejects with `what` and the last `detail` past `timeoutMs`, or
   * as soon as this view's signal aborts (the run stopped, an operation's bound passed).
   */
  async until(what: string, condition: () => boolean, timeoutMs: number, detail: () => string = () => ''): Promise<number> {
    const began = performance.now();
    const why = (): string => (this.#runSignal.aborted ? 'the run was stopped' : String((this.signal.reason as Error | undefined)?.message));
    const stopped = (): Error => new Error(`${what}: ${why()}${detail() ? ` (${detail()})` : ''}`);
    if (this.signal.aborted) throw stopped();
    if (condition()) return 0;
    const pending: PendingWait = { what, detail };
    this.#waits.add(pending);
    return await new Promise<number>((resolve, reject) => {
      let done = false;
      const finish = (settle: () => void): void => {
        if (done) return;
        done = true;
        this.#waits.delete(pending);
        unsubscribe();
        clearInterval(ticker);
        clearTimeout(deadline);
        this.signal.removeEventListener('abort', onAbort);
        settle();
      };
      const test = (): void => {
        if (condition()) finish(() => resolve(performance.now() - began));
      };
      const onAbort = (): void => finish(() => reject(stopped()));
      const unsubscribe = this.store.subscribe(test);
      const ticker = setInterval(test, 500);
      const deadline = setTimeout(() => finish(() => reject(new Error(`not within ${Math.round(timeoutMs / 1000)} s: ${what}${detail() ? ` (${detail()})` : ''}`))), timeoutMs);
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

export const isReady = (pod: KubeObject): boolean =>
  ((pod.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** The pid of a Pod's running container (the local kubelet's containerID is `process://<pid>`). */
export function containerPid(pod: KubeObject): number | undefined {
  const statuses = (pod.status as { containerStatuses?: { containerID?: string; state?: { running?: unknown } }[] } | undefined)?.containerStatuses ?? [];
  const id = statuses[0]?.state?.running ? statuses[0]?.containerID : undefined;
  const pid = Number(/^process:\/\/(\d+)$/.exec(id ?? '')?.[1]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
