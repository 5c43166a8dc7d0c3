// Teardown `auto` with the compiled server keeps the configurations without positive proof that
// the install is going away: another kind of owner, or a Deployment still wanting replicas.
import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import { seedInstall, seedPodOwnedBy } from './support/kube/owner-chain-fixtures.js';
import { shippedRbac } from './support/manifests/shipped-rbac.js';
import { keptAfterSigterm, refusedRequests } from './support/kube/teardown-checks.js';

t.test('a StatefulSet-owned pod keeps the configurations, and says why', async (t) => {
  const cluster = await ClusterHarness.start(t);
  seedPodOwnedBy(cluster.api.store, NAMESPACE, 'kas-0', { apiVersion: 'apps/v1', kind: 'StatefulSet', name: NAME });
  const replica = await cluster.startReplica(t, 'kas-0');
  await keptAfterSigterm(t, cluster, replica, /pod kas-0 is owned by StatefulSet kube-admission-server \(apps\/v1\).*garbage-collects them on uninstall/);
});
t.test('ReplicaSet already pruned, its Deployment still wanting replicas: kept (shipped RBAC)', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.api.setRbac(await shippedRbac(NAMESPACE));
  const install = seedInstall(cluster.api.store, NAMESPACE, { name: NAME, podNames: ['kas-a'], replicas: 2 });
  const replica = await cluster.startReplica(t, 'kas-a');
  cluster.api.store.delete('replicasets', NAMESPACE, install.replicaSetName); // revisionHistoryLimit at work during a rollout
  await keptAfterSigterm(t, cluster, replica, /Deployment kube-admission-server wants 2 replicas \(found by name: ReplicaSet kube-admission-server-5f8d7c9b6d is gone/);
  t.same(refusedRequests(cluster), [], 'the chain reading stays within the shipped Role');
});
