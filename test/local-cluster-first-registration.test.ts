// A webhook configuration that does not exist yet is created only once kube-apiserver can reach the
// webhook: its Service has a ready endpoint. Otherwise an enforcing rule (failurePolicy Fail)
// rejects writes with "no endpoints" (here: kube-proxy refuses the ClusterIP) until a Pod is Ready.
// On the local cluster (kubelet with the manifests' readiness probes, the EndpointSlice controller,
// kube-proxy), under a steady write load through all kube-apiservers: a fresh install, then the
// documented escape, scale to zero and back to two. No write may fail, and the store shows each
// configuration created after an endpoint of the Service was ready.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { AdmissionLoad, type LoadFailure } from '../local-cluster/cluster/admission-load.js';
import { readCredentials } from '../local-cluster/cluster/cli-process.js';
import { startLocalCluster } from '../local-cluster/cluster/index.js';
import { HELM_INSTALL_ORDER, InstallObjects } from './support/cluster/install-order.js';
import { storeCondition } from './support/cluster/store-condition.js';
import { readPodLogLines } from './support/logs/pod-log-lines.js';
import { EVENT_MS, EXIT_MS, STARTUP_MS } from './support/deadline.js';
import { renderChart } from './support/manifests/installs.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NS = 'kube-admission-server';
const NAME = 'kube-admission-server';
const CONFIGURATIONS = ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'];
/** Writes per second: a third each admitted, admitted with a warning, denied by the enforcing rule. */
const LOAD_PER_SECOND = 6;

const dir = await mkdtemp(join(tmpdir(), 'local-first-registration-'));
const clusterLog: string[] = [];
const cluster = await startLocalCluster({
  dir,
  certManager: false,
  slowStart: 4,
  log: (message) => {
    clusterLog.push(message);
    if (!message.includes('failed calling webhook')) t.comment(message);
  },
});
readPodLogLines(cluster.kubelet.logs);
t.teardown(async () => {
  await cluster.close(2);
  await rm(dir, { recursive: true, force: true });
});
const store = cluster.api.store;
store.createNamespace('demo');
store.createNamespace(NS);

// The Try-it policy: deny-privileged enforced (failurePolicy Fail), default-labels, require-app-label warned.
const example = parse(await readFile(join(ROOT, 'examples/local-cluster/policy-with-default-labels.yaml'), 'utf8')) as { data: Record<string, string> };
const install = new InstallObjects(cluster, await renderChart(ROOT, { fullnameOverride: NAME, policy: parse(example.data['policy.yaml'] ?? '') }), NS);
const credentials = await readCredentials(cluster.kubeconfig);

const podsOfInstall = (): KubeObject[] => store.list('pods', NS).filter((pod) => pod.metadata?.labels?.['app.kubernetes.io/name'] === NAME);
const isReady = (pod: KubeObject): boolean => ((pod.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const registered = (): boolean => CONFIGURATIONS.every((resource) => store.get(resource, undefined, NAME));
const failedCalls = (): string[] => clusterLog.filter((line) => line.includes('admission: failed calling webhook'));

interface Slice {
  endpoints?: { conditions?: { ready?: boolean } }[];
}
const readyEndpoints = (): number =>
  store
    .list('endpointslices', NS)
    .filter((slice) => slice.metadata?.labels?.['kubernetes.io/service-name'] === NAME)
    .flatMap((slice) => (slice as Slice).endpoints ?? [])
    .filter((endpoint) => endpoint.conditions?.ready !== false).length;

/** From the store, independently of the server: when the Service first had a ready endpoint, and when each configuration was created. */
function timeline(): { readyAt: () => number | undefined; createdAt: Map<string, number>; stop: () => void } {
  let readyAt: number | undefined;
  const createdAt = new Map<string, number>();
  const stop = store.subscribe((event) => {
    if (readyAt === undefined && readyEndpoints() > 0) readyAt = performance.now();
    if (event.type === 'ADDED' && CONFIGURATIONS.includes(event.resource) && event.object.metadata?.name === NAME) createdAt.set(event.resource, performance.now());
  });
  if (readyEndpoints() > 0) readyAt = performance.now();
  return { readyAt: () => readyAt, createdAt, stop };
}

/**
 * Runs the load around `operation` until the install has registered, both Pods are Ready and the
 * load has gone on for a while with the rule in force, then checks: no write failed (a failed
 * webhook call, or a 5xx), each configuration created after a ready endpoint, the rule enforced.
 */
async function noFailedWrite(t: Test, what: string, operation: () => Promise<void>, replicas = 2): Promise<void> {
  const failedBefore = failedCalls().length;
  const events = timeline();
  const load = new AdmissionLoad(credentials, 'demo', LOAD_PER_SECOND);
  let enforcedFrom = Number.POSITIVE_INFINITY;
  try {
    await load.answerAfter(0, EVENT_MS);
    await operation();
    await storeCondition(store, `${what}: both configurations registered and ${replicas} Ready Pods`, () => registered() && podsOfInstall().filter(isReady).length === replicas, STARTUP_MS);
    // Every kube-apiserver has seen the configurations by now (the local cluster's lag is 0); then a few seconds more of load.
    enforcedFrom = Date.now() + 1000;
    await load.answerAfter(enforcedFrom + 4000, EVENT_MS);
  } finally {
    await load.stop();
    events.stop();
  }
  const { report } = load;
  const sent = report.sent.labelled + report.sent.unlabelled + report.sent.privileged;
  const failedWrite = (f: LoadFailure): boolean => f.status === 0 || f.status >= 500 || /failed calling webhook|no endpoints/.test(f.detail);
  t.comment(`${what}: ${sent} writes; ${report.failures.length} answered without the webhook while nothing was registered`);
  t.same(report.failures.filter(failedWrite), [], `${what}: no write failed`);
  t.same(failedCalls().slice(failedBefore), [], `${what}: no webhook call failed (the local cluster logs each)`);
  t.same(report.failures.filter((f) => f.at >= enforcedFrom), [], `${what}: once registered, every write answered as the policy says (the enforcing rule in force)`);
  const readyAt = events.readyAt();
  t.ok(readyAt !== undefined, `${what}: the Service had a ready endpoint`);
  for (const resource of CONFIGURATIONS) {
    const createdAt = events.createdAt.get(resource);
    t.ok(createdAt !== undefined && readyAt !== undefined && createdAt > readyAt, `${what}: ${resource} created after the Service had a ready endpoint (${readyAt === undefined || createdAt === undefined ? 'never' : `${Math.round(createdAt - readyAt)} ms after`})`);
  }
}

t.test('a fresh install under a steady write load: no failed write', async (t) => {
  await noFailedWrite(t, 'fresh install', () => install.install(HELM_INSTALL_ORDER));
});

async function scale(replicas: number): Promise<void> {
  const deployment = structuredClone(store.get('deployments', NS, NAME)!);
  (deployment['spec'] as { replicas?: number }).replicas = replicas;
  await install.admin.update({ resource: 'deployments', namespace: NS, name: NAME }, deployment);
}

/** The escape: the exiting Pods see the Deployment scaled to zero and delete both configurations. */
async function scaleToZero(): Promise<void> {
  await scale(0);
  await storeCondition(store, 'scaled to zero: no Pod, no configuration', () => podsOfInstall().length === 0 && CONFIGURATIONS.every((r) => !store.get(r, undefined, NAME)), 2 * EXIT_MS);
}

t.test('scale to zero and back to two under a steady write load: no failed write', async (t) => {
  await scaleToZero();
  await noFailedWrite(t, 'scale 0 -> 2', () => scale(2));
});

t.test('scale to zero and back to one: the only Pod, the leader, is Ready before it registers', async (t) => {
  // Its own endpoint is the only one there can be: had it waited for it without being Ready, it
  // would have registered only at the bound (a minute) and before its endpoint was ready.
  await scaleToZero();
  await noFailedWrite(t, 'scale 0 -> 1', () => scale(1), 1);
});
