import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';

t.test('a self-check that can never pass: exit 1, nothing registered, no lease taken', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = cluster.spawnReplica(t, 'kas-a', ['--self-check-timeout', '1ms']);
  const exit = await replica.child.exit();
  t.equal(exit.code, 1);
  t.match(replica.child.logs.find((l) => l.msg === 'startup failed; shutting down'), { error: /self-check failed/ });
  t.notOk(cluster.configuration('validating'), 'nothing registered');
  t.notOk(cluster.api.store.get('leases', NAMESPACE, `${NAME}-leader`), 'no lease taken');
});

t.test('registration refused after winning the lease: exit 1 and the lease is released for a standby', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.faults.add({ resource: 'validatingwebhookconfigurations', verb: 'create' }, { status: 422 });
  const replica = cluster.spawnReplica(t, 'kas-a', []);
  const exit = await replica.child.exit();
  t.equal(exit.code, 1);
  t.match(replica.child.logs.find((l) => l.msg === 'startup failed; shutting down'), { error: /registering the validating webhook configuration failed: 422/ });
  const lease = cluster.api.store.get('leases', NAMESPACE, `${NAME}-leader`) as { spec: { holderIdentity?: string } };
  t.equal(lease.spec.holderIdentity ?? '', '', 'lease released on the failure path');
  // The teardown policy still decides: the Deployment wants a replica, which restarts and retries.
  t.ok(cluster.configuration('mutating'), 'what it registered is kept while the Deployment still wants replicas');
  t.match(replica.child.logs.find((l) => l.msg === 'keeping the webhook configurations'), { why: /wants 1 replicas/ });
});

