import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdmissionCaller, type AdmissionCaller } from '../../../local-cluster/admission-caller/index.js';
import { ANY_PORTS, ChildServer } from '../server/child-server.js';
import { STARTUP_MS } from '../deadline.js';
import { seedReadyService } from './ready-service.js';
import { laggingConfigurations } from './lagging-configurations.js';
import { RoundRobinService } from './round-robin-service.js';
import { startFakeApiServer, type FakeApiServer, type FakeApiServerOptions, type KubeObject } from '../../../local-cluster/fake-apiserver/index.js';

/** Where cleanups go: a tap Test, or the benchmark's own list. */
export interface Cleanups {
  teardown(fn: () => unknown): void;
}

export const NAMESPACE = 'kas';
/** End-to-end tests run against a control plane of three kube-apiservers (several behind one address, as production runs them). */
export const E2E_APISERVERS = 3;
export const NAME = 'kube-admission-server';

/** A replica started without waiting for it (a startup expected to fail, or awaited later). */
export interface SpawnedReplica {
  podName: string;
  child: ChildServer;
}

/** A replica that is ready, with the ports the OS gave its listeners. */
export interface Replica extends SpawnedReplica {
  port: number;
  healthPort: number;
}

/**
 * Lease timing of the replicas. Steady by default: a renewal that a loaded two-core machine
 * delays by seconds must not make a leader step down in the middle of a test that is not about
 * elections (a hand-over by release is immediate whatever the duration). Tests of expiry and
 * step-down pass FAST_LEASE.
 */
export const STEADY_LEASE = { LEASE_DURATION: '15s', LEASE_RENEW_DEADLINE: '10s', LEASE_RETRY_PERIOD: '500ms' } as const;
export const FAST_LEASE = { LEASE_DURATION: '3s', LEASE_RENEW_DEADLINE: '2s', LEASE_RETRY_PERIOD: '500ms' } as const;

/**
 * The API test double with the objects an install has (namespace, ClusterRole, the Service with a
 * ready endpoint, Deployment -> ReplicaSet -> Pods), a kubeconfig for child-process servers, and
 * helpers to start replicas.
 */
export class ClusterHarness {
  readonly api: FakeApiServer;
  readonly kubeconfig: string;
  readonly dir: string;

  private constructor(api: FakeApiServer, dir: string) {
    this.api = api;
    this.dir = dir;
    this.kubeconfig = join(dir, 'kubeconfig');
  }

  /**
   * `version`: what the API server reports on /version (default: the double's, a current one).
   * `apiservers`: the control plane's kube-apiservers, a count or each one's lag; default three
   * without lag (a production control plane; tests about lag ask for it).
   */
  static async start(t: Cleanups, options: { version?: string; apiservers?: FakeApiServerOptions['apiservers'] } = {}): Promise<ClusterHarness> {
    const api = await startFakeApiServer({ namespaces: [NAMESPACE, 'team-a'], apiservers: E2E_APISERVERS, ...options });
    const dir = await mkdtemp(join(tmpdir(), 'kas-cluster-'));
    const harness = new ClusterHarness(api, dir);
    await api.writeKubeconfig(harness.kubeconfig, { namespace: NAMESPACE });
    api.store.put('clusterroles', { metadata: { name: NAME }, rules: [] } as KubeObject);
    seedReadyService(api.store, NAMESPACE, NAME);
    t.teardown(async () => {
      await api.close();
      await rm(dir, { recursive: true, force: true });
    });
    return harness;
  }

  /** Deployment -> ReplicaSet -> one Pod per name, with controller ownerReferences. */
  seedDeployment(podNames: readonly string[], replicas = podNames.length, replicaSetName = `${NAME}-7d4b9c`): void {
    const deployment = this.api.store.put('deployments', {
      metadata: { name: NAME, namespace: NAMESPACE },
      spec: { replicas, selector: { matchLabels: { app: NAME } }, template: { metadata: { labels: { app: NAME } }, spec: { containers: [{ name: 'server', image: 'kas' }] } } },
    } as KubeObject);
    const owner = (object: KubeObject, kind: string) => [
      { apiVersion: kind === 'Deployment' ? 'apps/v1' : 'apps/v1', kind, name: object.metadata!.name!, uid: object.metadata!.uid!, controller: true },
    ];
    const replicaSet = this.api.store.put('replicasets', {
      metadata: { name: replicaSetName, namespace: NAMESPACE, ownerReferences: owner(deployment, 'Deployment') },
      spec: { replicas, selector: { matchLabels: { app: NAME } } },
    } as KubeObject);
    for (const podName of podNames) {
      this.api.store.put('pods', {
        metadata: { name: podName, namespace: NAMESPACE, ownerReferences: owner(replicaSet, 'ReplicaSet') },
        spec: { containers: [{ name: 'server', image: 'kas' }] },
      } as KubeObject);
    }
  }

  /** Starts the compiled server as a pod of the install; resolves once it logged `ready` (within `readyTimeoutMs`). */
  async startReplica(t: Cleanups, podName: string, args: readonly string[] = [], env: Record<string, string> = {}, readyTimeoutMs = STARTUP_MS): Promise<Replica> {
    return await ClusterHarness.ready(this.spawnReplica(t, podName, args, env), readyTimeoutMs);
  }

  /** Waits for a spawned replica's `ready` line and reads its ports. */
  static async ready(replica: SpawnedReplica, timeoutMs = STARTUP_MS): Promise<Replica> {
    const ports = await replica.child.listening(timeoutMs);
    await replica.child.waitForMessage('ready', timeoutMs);
    return { ...replica, ...ports };
  }

  /**
   * Starts without waiting (for tests of failing startups); both ports are picked by the OS.
   * `entry`: the script to run, the compiled server by default (the image's bundle, say).
   */
  spawnReplica(t: Cleanups, podName: string, args: readonly string[] = [], env: Record<string, string> = {}, entry?: string): SpawnedReplica {
    const child = new ChildServer(
      [...ANY_PORTS, '--cert-dir', join(this.dir, `certs-${podName}`), ...args],
      {
        KUBECONFIG: this.kubeconfig,
        POD_NAMESPACE: NAMESPACE,
        POD_NAME: podName,
        OWNER_CLUSTER_ROLE: NAME,
        ...STEADY_LEASE,
        RESYNC_PERIOD: '2s',
        ...env,
      },
      undefined,
      entry,
    );
    t.teardown(() => child.stop('SIGKILL'));
    return { podName, child };
  }

  /** kube-apiserver's caller role, sending `<svc>.<ns>.svc` to whatever port `target()` names. */
  caller(t: Cleanups, target: () => number): AdmissionCaller {
    const caller = createAdmissionCaller({ api: this.api, resolveService: () => ({ host: '127.0.0.1', port: target() }) });
    t.teardown(() => caller.close());
    return caller;
  }

  /**
   * kube-apiserver's caller behind a Service of several replicas: each new connection goes to the
   * next of `ports()` in turn (RoundRobinService), so a retry on a new connection reaches another.
   */
  serviceCaller(t: Cleanups, ports: () => readonly number[]): { caller: AdmissionCaller; service: RoundRobinService } {
    const service = new RoundRobinService(ports);
    const caller = createAdmissionCaller({ api: this.api, resolveService: () => ({ host: '127.0.0.1', port: 443 }), newAgent: () => service.agent() });
    t.teardown(() => caller.close());
    return { caller, service };
  }

  /**
   * The caller role of the slowest kube-apiserver: it calls as the configurations were `lagMs`
   * ago (its informer cache lags), over its own connections.
   */
  laggingCaller(t: Cleanups, target: () => number, lagMs: number): AdmissionCaller {
    const lagging = laggingConfigurations(this.api.store, lagMs);
    const caller = createAdmissionCaller({ api: { store: lagging.store }, resolveService: () => ({ host: '127.0.0.1', port: target() }) });
    t.teardown(async () => {
      lagging.stop();
      await caller.close();
    });
    return caller;
  }

  /** SHA-256 fingerprints of the CAs in each webhook's caBundle of the stored configuration of `kind`, each list sorted. */
  caBundleFingerprints(kind: 'mutating' | 'validating'): string[][] {
    const webhooks = this.configuration<{ webhooks?: { clientConfig: { caBundle: string } }[] }>(kind)?.webhooks ?? [];
    return webhooks.map((w) =>
      (Buffer.from(w.clientConfig.caBundle, 'base64').toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((pem) => new X509Certificate(pem).fingerprint256).sort(),
    );
  }

  /** True when every webhook of both stored configurations trusts every CA of `fingerprints` (and some exist). */
  bundlesHold(fingerprints: readonly string[]): boolean {
    const bundles = [...this.caBundleFingerprints('mutating'), ...this.caBundleFingerprints('validating')];
    return bundles.length > 0 && bundles.every((bundle) => fingerprints.every((fingerprint) => bundle.includes(fingerprint)));
  }

  /** The service paths the stored validating configuration routes to, sorted. */
  registeredValidatingPaths(): string[] {
    const webhooks = this.configuration<{ webhooks?: { clientConfig: { service: { path: string } } }[] }>('validating')?.webhooks ?? [];
    return webhooks.map((w) => w.clientConfig.service.path).sort();
  }

  /** The stored configuration, typed loosely for assertions. */
  configuration<T = Record<string, unknown>>(kind: 'mutating' | 'validating'): T | undefined {
    return this.api.store.get(`${kind}webhookconfigurations`, undefined, NAME) as T | undefined;
  }
}

export const podFixture = (labels: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'team-a', labels },
  spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9', ...extra }] },
});

export const POD_KIND = { group: '', version: 'v1', kind: 'Pod' };
export const POD_RESOURCE = { group: '', version: 'v1', resource: 'pods' };
