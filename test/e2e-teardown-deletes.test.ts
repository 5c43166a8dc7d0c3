// Teardown with the compiled server deletes both configurations on positive proof (`auto`: the
// Deployment is gone) or when told to (`always`), and the shutdown succeeds.
import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { seedInstall } from './support/kube/owner-chain-fixtures.js';
import { shippedRbac } from './support/manifests/shipped-rbac.js';
import { configurationDeletes, refusedRequests, teardownDecision } from './support/kube/teardown-checks.js';

t.test('Deployment deleted (its ReplicaSet collected too): SIGTERM tears down (shipped RBAC)', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.api.setRbac(await shippedRbac(NAMESPACE));
  const install = seedInstall(cluster.api.store, NAMESPACE, { name: NAME, podNames: ['kas-a'], replicas: 2 });
  const replica = await cluster.startReplica(t, 'kas-a');
  cluster.api.store.delete('deployments', NAMESPACE, NAME);
  cluster.api.store.delete('replicasets', NAMESPACE, install.replicaSetName);
  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 0);
  t.match(await teardownDecision(replica), { msg: 'deleting the webhook configurations', teardown: true, why: /Deployment kube-admission-server is gone \(found by name/ });
  t.notOk(cluster.configuration('validating'), 'validating configuration deleted');
  t.notOk(cluster.configuration('mutating'), 'mutating configuration deleted');
  t.same(refusedRequests(cluster), []);
});
t.test('--teardown always: a rolling-update SIGTERM still deletes both, and the shutdown succeeds', async (t) => {
  const cluster = await ClusterHarness.start(t);
  seedInstall(cluster.api.store, NAMESPACE, { name: NAME, podNames: ['kas-a'], replicas: 2 });
  const replica = await cluster.startReplica(t, 'kas-a', ['--teardown', 'always']);
  // The leader reads the chain once while it runs (the Deployment owns the Secret and the Lease),
  // then the Deployment by name at every pass; the teardown decision would start at the Pod again.
  await cluster.api.waitForRequest((r) => r.verb === 'get' && r.resource === 'replicasets', { timeoutMs: EVENT_MS });
  const signalledAt = performance.now();
  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 0, 'exit 0');
  t.match(await teardownDecision(replica), { msg: 'deleting the webhook configurations', why: '--teardown always' });
  t.notOk(cluster.configuration('validating'));
  t.notOk(cluster.configuration('mutating'));
  t.same(configurationDeletes(cluster).map((r) => r.status).sort(), [200, 200], 'one successful DELETE each');
  t.same(
    cluster.api.requests.filter((r) => r.startedAt >= signalledAt && r.verb === 'get' && ['pods', 'replicasets'].includes(r.resource ?? '')),
    [],
    'no owner chain read after SIGTERM: always means always',
  );
  t.match(await replica.child.waitForMessage('shutdown complete', 5000), { steps: { teardown: /^ok/, 'server-close': /^ok/, 'lease-release': /^ok/ } });
});
