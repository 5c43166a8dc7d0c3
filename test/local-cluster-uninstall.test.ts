// Uninstalls as the tools do them, on the local cluster: `helm uninstall` (the chart's objects
// deleted in Helm's kind order: the Deployment first, the RBAC right after) and `kubectl delete -k`
// (the kustomize base's objects in the order kustomize renders them: the RBAC before the
// Deployment), each while the Pods are still running and the garbage collector works through
// what was deleted. Afterwards nothing of the install is left: no webhook configuration, no
// generated Secret (it holds the CA key), no Lease. And an ordinary uninstall is no error: every
// Pod exits 0, and no line of its log is at error level, although its rights go before or during
// its shutdown (the 403s it gets then are what an uninstall looks like).
import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { KubeObject, OwnerReference } from '../local-cluster/fake-apiserver/index.js';
import { startLocalCluster } from '../local-cluster/cluster/index.js';
import { HELM_INSTALL_ORDER, HELM_UNINSTALL_ORDER, InstallObjects } from './support/cluster/install-order.js';
import { storeCondition } from './support/cluster/store-condition.js';
import { readPodLogLines } from './support/logs/pod-log-lines.js';
import { EVENT_MS, EXIT_MS, STARTUP_MS, within } from './support/deadline.js';
import { renderChart } from './support/manifests/installs.js';
import { renderKustomization } from './support/manifests/kustomize.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NS = 'kube-admission-server';
const NAME = 'kube-admission-server';

const dir = await mkdtemp(join(tmpdir(), 'local-uninstall-'));
const cluster = await startLocalCluster({ dir, certManager: false, slowStart: 4, log: (message) => t.comment(message) });
readPodLogLines(cluster.kubelet.logs);
t.teardown(async () => {
  await cluster.close(2);
  await rm(dir, { recursive: true, force: true });
});
const store = cluster.api.store;
const podsOfInstall = (): KubeObject[] => store.list('pods', NS).filter((pod) => pod.metadata?.labels?.['app.kubernetes.io/name'] === NAME);
const isReady = (pod: KubeObject): boolean => ((pod.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
/** Whether `object` names every one of these owners (kind, name and uid as the store holds them). */
const ownedBy = (object: KubeObject | undefined, owners: readonly KubeObject[]): boolean => {
  const refs: readonly OwnerReference[] = object?.metadata?.ownerReferences ?? [];
  return owners.every((owner) => refs.some((ref) => ref.kind === owner.kind && ref.name === owner.metadata?.name && ref.uid === owner.metadata?.uid));
};

/**
 * Installs `install` in `installOrder` into the existing namespace, waits until it registered and
 * owns its Secret and Lease, uninstalls it in `uninstallOrder` and checks what is left and logged.
 */
async function uninstallLeavesNothing(
  t: Test,
  install: InstallObjects,
  installOrder?: readonly string[],
  uninstallOrder?: readonly string[],
  beforeUninstall: (logged: (pattern: RegExp) => Promise<void>) => Promise<void> = async () => undefined,
): Promise<void> {
  await install.install(installOrder);

  await storeCondition(store, 'two Ready Pods', () => podsOfInstall().filter(isReady).length === 2, STARTUP_MS);
  await storeCondition(store, 'both configurations registered', () => ['mutating', 'validating'].every((kind) => store.get(`${kind}webhookconfigurations`, undefined, NAME)), EVENT_MS);
  // Each Pod's whole log, kept past the Pod's removal (the kubelet forgets it then).
  const logs = new Map<string, string>();
  const appended = new EventEmitter<{ chunk: [] }>();
  const ended: Promise<void>[] = [];
  for (const pod of podsOfInstall()) {
    const name = pod.metadata!.name!;
    const sofar = cluster.kubelet.logs.read(NS, name, { previous: false });
    logs.set(name, 'text' in sofar ? sofar.text : '');
    const append = (chunk: string): void => {
      logs.set(name, logs.get(name) + chunk);
      appended.emit('chunk');
    };
    ended.push(new Promise((resolve) => cluster.kubelet.logs.follow(NS, name, { previous: false }, append, resolve)));
  }
  /** Resolves once a Pod's log matches `pattern` (checked at every chunk). */
  const logged = (pattern: RegExp): Promise<void> => {
    const matches = (): boolean => [...logs.values()].some((text) => pattern.test(text));
    const seen = new Promise<void>((resolve) => {
      const check = (): void => {
        if (!matches()) return;
        appended.off('chunk', check);
        resolve();
      };
      appended.on('chunk', check);
      check();
    });
    return within(EVENT_MS, `a log line matching ${pattern}`, seen);
  };
  // The owners as the store holds them: the uninstall deletes both.
  const owners = [store.get('clusterroles', undefined, NAME), store.get('deployments', NS, NAME)].filter((o): o is KubeObject => o !== undefined);
  t.equal(owners.length, 2, 'the ClusterRole and the Deployment exist');
  // Not fatal: the uninstall below still runs, and shows what an unowned object does then.
  await storeCondition(store, 'the generated Secret and the Lease owned by the ClusterRole and the Deployment', () => ownedBy(store.get('secrets', NS, `${NAME}-certs`), owners) && ownedBy(store.get('leases', NS, `${NAME}-leader`), owners), EVENT_MS)
    .then(() => t.pass('the generated Secret and the Lease name the ClusterRole and the Deployment as owners'))
    .catch((error: unknown) => t.fail((error as Error).message));

  const exitsBefore = cluster.kubelet.exits.length;
  await beforeUninstall(logged);
  await install.uninstall(uninstallOrder);
  await storeCondition(store, 'every Pod gone', () => podsOfInstall().length === 0, 2 * EXIT_MS);
  await Promise.all(ended);
  await storeCondition(store, 'the configurations, the Secret and the Lease collected', () =>
    !store.get('mutatingwebhookconfigurations', undefined, NAME) &&
    !store.get('validatingwebhookconfigurations', undefined, NAME) &&
    !store.get('secrets', NS, `${NAME}-certs`) &&
    !store.get('leases', NS, `${NAME}-leader`), EVENT_MS).catch((error: unknown) => t.fail((error as Error).message));
  t.notOk(store.get('secrets', NS, `${NAME}-certs`), 'no Secret with the CA key left');
  t.notOk(store.get('leases', NS, `${NAME}-leader`), 'no Lease left');
  t.notOk(store.get('validatingwebhookconfigurations', undefined, NAME), 'no configuration left');
  t.same(['secrets', 'leases', 'configmaps', 'serviceaccounts', 'roles', 'pods', 'replicasets'].flatMap((r) => store.list(r, NS).map((o) => `${r}/${o.metadata?.name}`)), [], 'the namespace holds nothing of the install');

  const exits = cluster.kubelet.exits.slice(exitsBefore).filter((e) => e.namespace === NS);
  t.equal(exits.length, 2, 'both Pods stopped');
  t.same(exits.map((e) => [e.code, e.signal]), [[0, null], [0, null]], 'each exited 0 after its SIGTERM');
  for (const [pod, text] of logs) {
    const lines = text.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: string; msg: string });
    t.same(lines.filter((l) => l.level === 'error' || l.level === 'fatal'), [], `${pod}: no error in its log`);
    t.match(lines.at(-1), { level: 'info', msg: 'shutdown complete' }, `${pod}: ends with the shutdown summary at info`);
  }
}

// The release namespace exists before and stays after, as with `helm install --create-namespace`.
await new InstallObjects(cluster, [], NS).admin.create('namespaces', undefined, { metadata: { name: NS } });

t.test('helm uninstall leaves nothing behind and logs no error', async (t) => {
  const chart = new InstallObjects(cluster, await renderChart(ROOT), NS);
  t.same(chart.unordered(HELM_INSTALL_ORDER), [], 'every kind the chart renders has its place in Helm’s order');
  await uninstallLeavesNothing(t, chart, HELM_INSTALL_ORDER, HELM_UNINSTALL_ORDER);
});

t.test('kubectl delete -k leaves nothing behind and logs no error, the namespace kept', async (t) => {
  // An overlay that installs into a namespace it does not own drops the base's Namespace: then no
  // namespace deletion sweeps up what the server created, only their owners can.
  const base = (await renderKustomization(join(ROOT, 'manifests', 'base'))).filter((o) => o.kind !== 'Namespace');
  t.ok(base.findIndex((o) => o.kind === 'ClusterRole') < base.findIndex((o) => o.kind === 'Deployment'), 'kustomize renders the RBAC before the Deployment, so kubectl deletes it first');
  await uninstallLeavesNothing(t, new InstallObjects(cluster, base, NS));
});

t.test('an uninstall that removes the RBAC long before the Pods logs no error', async (t) => {
  // A GitOps tool pruning in its own order, or a slow Pod deletion: the garbage collector deletes
  // the configurations with the ClusterRole while the leader still runs, and it cannot restore them.
  const chart = new InstallObjects(cluster, await renderChart(ROOT), NS);
  await uninstallLeavesNothing(t, chart, HELM_INSTALL_ORDER, HELM_UNINSTALL_ORDER, async (logged) => {
    for (const kind of ['RoleBinding', 'Role', 'ClusterRoleBinding', 'ClusterRole']) await chart.delete(chart.one(kind));
    await storeCondition(store, 'the configurations collected with the ClusterRole', () => !store.get('validatingwebhookconfigurations', undefined, NAME) && !store.get('mutatingwebhookconfigurations', undefined, NAME), EVENT_MS);
    // The leader saw them go and could not restore them: the case this test is about.
    await logged(/403 Forbidden.*"msg":"reconcile failed/);
    t.pass('the leader tried to restore the configurations and got a 403');
  });
});
