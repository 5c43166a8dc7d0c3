// What owns the generated Secret (it holds the CA key) and the Lease decides what deletes them.
// An uninstall must (test/local-cluster-uninstall.test.ts); nothing else may: a rolling update
// (ReplicaSets and Pods come and go), and a GitOps tool that force-replaces one object of the
// install (delete, then create: a new uid), the ClusterRole or the Deployment (whose selector is
// immutable, so a changed one is a replace). Either would start the CA over: every replica's
// certificate changes and the caBundle with it. On the local cluster with the chart's objects,
// its garbage collector doing what kube-controller-manager's does (an object goes when every
// owner is gone; a gone owner's reference is dropped while another remains).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { startLocalCluster } from '../local-cluster/cluster/index.js';
import { HELM_INSTALL_ORDER, InstallObjects } from './support/cluster/install-order.js';
import { storeCondition } from './support/cluster/store-condition.js';
import { readPodLogLines } from './support/logs/pod-log-lines.js';
import { EVENT_MS, EXIT_MS, STARTUP_MS } from './support/deadline.js';
import { renderChart } from './support/manifests/installs.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NS = 'kube-admission-server';
const NAME = 'kube-admission-server';
const SECRET = `${NAME}-certs`;
const LEASE = `${NAME}-leader`;
/** The leader re-reads the owners at every reconcile pass; a short resync so the test waits seconds for one, not a minute. */
const RESYNC = '3s';

const dir = await mkdtemp(join(tmpdir(), 'local-owners-'));
const cluster = await startLocalCluster({ dir, certManager: false, slowStart: 4, log: (message) => t.comment(message) });
readPodLogLines(cluster.kubelet.logs);
t.teardown(async () => {
  await cluster.close(2);
  await rm(dir, { recursive: true, force: true });
});
const store = cluster.api.store;

const objects = (await renderChart(ROOT)).map((object) => {
  if (object.kind !== 'Deployment') return object;
  const spec = object['spec'] as { template: { spec: { containers: { env?: { name: string; value: string }[] }[] } } };
  for (const container of spec.template.spec.containers) container.env = [...(container.env ?? []), { name: 'RESYNC_PERIOD', value: RESYNC }];
  return object;
});
const install = new InstallObjects(cluster, objects, NS);

const podsOfInstall = (): KubeObject[] => store.list('pods', NS).filter((pod) => pod.metadata?.labels?.['app.kubernetes.io/name'] === NAME);
const isReady = (pod: KubeObject): boolean => ((pod.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const caOf = (): string | undefined => (store.get('secrets', NS, SECRET)?.['data'] as Record<string, string> | undefined)?.['ca.crt'];
const uidOf = (object: KubeObject | undefined): string | undefined => object?.metadata?.uid;
/** The owners `name` names, as `Kind/name/uid`, sorted. */
const ownersOf = (resource: string, name: string): string[] =>
  (store.get(resource, NS, name)?.metadata?.ownerReferences ?? []).map((r) => `${r.kind}/${r.name}/${r.uid}`).sort();
/** The two owners as the store holds them now. */
const liveOwners = (): string[] =>
  [store.get('clusterroles', undefined, NAME), store.get('deployments', NS, NAME)]
    .filter((o): o is KubeObject => o !== undefined)
    .map((o) => `${o.kind}/${o.metadata?.name}/${o.metadata?.uid}`)
    .sort();
const ownedByTheLiveOwners = (): boolean => {
  const live = liveOwners();
  return live.length === 2 && [SECRET, LEASE].every((name, i) => JSON.stringify(ownersOf(i === 0 ? 'secrets' : 'leases', name)) === JSON.stringify(live));
};

// Every deletion of the Secret or the Lease, for the whole run: none may happen.
const deletions: string[] = [];
store.subscribe((event) => {
  const name = event.object.metadata?.name;
  if (event.type === 'DELETED' && ((event.resource === 'secrets' && name === SECRET) || (event.resource === 'leases' && name === LEASE))) deletions.push(`${event.resource}/${name}`);
});

store.createNamespace(NS);
await install.install(HELM_INSTALL_ORDER);
await storeCondition(store, 'two Ready Pods', () => podsOfInstall().filter(isReady).length === 2, STARTUP_MS);
await storeCondition(store, 'the Secret and the Lease owned by the ClusterRole and the Deployment', ownedByTheLiveOwners, EVENT_MS);
const ca = caOf();
const secretUid = uidOf(store.get('secrets', NS, SECRET));
const leaseUid = uidOf(store.get('leases', NS, LEASE));
t.ok(ca, 'the generated CA is in the Secret');

/** After each operation: the same Secret (uid) with the same CA, the same Lease, owned by both owners as they are now. */
async function keptAndOwned(t: Test, what: string): Promise<void> {
  await storeCondition(store, `after ${what}: the Secret and the Lease owned by the ClusterRole and the Deployment as they are now`, ownedByTheLiveOwners, EVENT_MS).catch((error: unknown) =>
    t.fail((error as Error).message, { secret: ownersOf('secrets', SECRET), lease: ownersOf('leases', LEASE), live: liveOwners() }),
  );
  t.same(deletions, [], `${what}: neither the Secret nor the Lease was ever deleted`);
  t.equal(uidOf(store.get('secrets', NS, SECRET)), secretUid, `${what}: the same Secret`);
  t.equal(caOf(), ca, `${what}: the same CA`);
  t.equal(uidOf(store.get('leases', NS, LEASE)), leaseUid, `${what}: the same Lease`);
}

const hashOf = (pod: KubeObject): string | undefined => pod.metadata?.labels?.['pod-template-hash'];
/** Two Ready Pods, none of the ones in `before`. */
const replacedBy = (before: readonly string[]) => (): boolean => {
  const pods = podsOfInstall();
  return pods.length === 2 && pods.every((pod) => isReady(pod) && !before.includes(uidOf(pod) ?? ''));
};

t.test('a rolling update keeps the Secret, its CA and the Lease', async (t) => {
  const before = podsOfInstall().map((pod) => uidOf(pod) ?? '');
  const hashes = new Set(podsOfInstall().map(hashOf));
  const deployment = structuredClone(store.get('deployments', NS, NAME)!);
  const template = (deployment['spec'] as { template: { metadata: { annotations?: Record<string, string> } } }).template;
  template.metadata.annotations = { ...template.metadata.annotations, 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() };
  await install.admin.update({ resource: 'deployments', namespace: NS, name: NAME }, deployment);
  await storeCondition(store, 'the rollout done: two new Ready Pods', replacedBy(before), STARTUP_MS);
  t.ok(podsOfInstall().every((pod) => !hashes.has(hashOf(pod))), 'the Pods belong to a new ReplicaSet');
  await keptAndOwned(t, 'a rolling update');
});

t.test('a force-replaced ClusterRole keeps them: the Deployment still owns them', async (t) => {
  const old = uidOf(store.get('clusterroles', undefined, NAME));
  await install.delete(install.one('ClusterRole'));
  await storeCondition(store, 'the ClusterRole gone', () => !store.get('clusterroles', undefined, NAME), EVENT_MS);
  await install.create(install.one('ClusterRole'));
  t.not(uidOf(store.get('clusterroles', undefined, NAME)), old, 'a new ClusterRole (new uid)');
  await keptAndOwned(t, 'a force-replaced ClusterRole');
});

t.test('a force-replaced Deployment keeps them: the ClusterRole still owns them', async (t) => {
  const before = podsOfInstall().map((pod) => uidOf(pod) ?? '');
  const old = uidOf(store.get('deployments', NS, NAME));
  await install.delete(install.one('Deployment'));
  await storeCondition(store, 'the Deployment and its Pods gone', () => !store.get('deployments', NS, NAME) && podsOfInstall().length === 0, 2 * EXIT_MS);
  await install.create(install.one('Deployment'));
  t.not(uidOf(store.get('deployments', NS, NAME)), old, 'a new Deployment (new uid)');
  await storeCondition(store, 'two new Ready Pods', replacedBy(before), STARTUP_MS);
  await keptAndOwned(t, 'a force-replaced Deployment');
});
