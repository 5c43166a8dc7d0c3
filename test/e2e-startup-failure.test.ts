import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import { writeRequests } from './support/kube/write-audit.js';

t.test('a self-check that can never pass: exit 1, nothing written, no lease taken', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const spawnedAt = performance.now();
  const replica = cluster.spawnReplica(t, 'kas-a', ['--self-check-timeout', '1ms']);
  const exit = await replica.child.exit();
  t.equal(exit.code, 1);
  t.match(replica.child.logs.find((l) => l.msg === 'startup failed; shutting down'), { error: /self-check failed/ });
  t.notOk(cluster.configuration('validating'), 'nothing registered');
  t.notOk(cluster.api.store.get('leases', NAMESPACE, `${NAME}-leader`), 'no lease taken');
  t.same(writeRequests(cluster, spawnedAt), [], 'not even the generated Secret');
});

// The dry run before the first write was accepted; the real create is refused (the rights or an
// admission policy changed in between): the start fails after writing.
const REFUSED_CREATE = { resource: 'validatingwebhookconfigurations', verb: 'create', dryRun: false } as const;

t.test('registration refused after its dry run passed and the lease was won: exit 1 and the lease is released for a standby', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.faults.add(REFUSED_CREATE, { status: 422 });
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

t.test('the same out of a cluster: the process deletes what it created and nothing else', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.api.faults.add(REFUSED_CREATE, { status: 422 });
  const spawnedAt = performance.now();
  const replica = cluster.spawnReplica(t, 'kas-a', [], { POD_NAME: '' });
  const exit = await replica.child.exit();
  t.equal(exit.code, 1);
  t.notOk(cluster.configuration('mutating'), 'the configuration it created is gone again');
  const deletes = writeRequests(cluster, spawnedAt).filter((w) => w.startsWith('delete'));
  t.same(deletes, [`delete mutatingwebhookconfigurations/${NAME} 200`], 'one DELETE: of what it created; the validating one it never wrote is not asked for');
  t.ok(writeRequests(cluster, spawnedAt).includes(`create mutatingwebhookconfigurations/ 201`), 'after it had created it');
  t.match(replica.child.logs.find((l) => l.msg === 'deleting the webhook configurations'), { why: /not running in a pod/ });
});
