// A leader that stepped down because its renewals failed (an API outage) still hands the Lease over
// when it gets SIGTERM: the record may still name it, and a standby would otherwise wait it out.
import t from 'tap';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness, FAST_LEASE, NAME, NAMESPACE } from './support/kube/cluster-harness.js';

t.test('SIGTERM after stepping down on failed renewals: the Lease is still released', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  // Renewals every 1.5 s: after the faults clear, the SIGTERM comes well before the next renewal.
  const replica = await cluster.startReplica(t, 'kas-a', [], { ...FAST_LEASE, LEASE_RETRY_PERIOD: '1500ms' });
  cluster.api.faults.add({ resource: 'leases', verb: 'update' }, { status: 503 });
  await replica.child.waitForMessage('stopped being the leader', EVENT_MS);
  cluster.api.faults.clear();
  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 0);
  t.match(replica.child.logs.find((l) => l.msg === 'shutdown complete'), { steps: { 'lease-release': /^ok/ } }, 'released, not skipped');
  const lease = cluster.api.store.get('leases', NAMESPACE, `${NAME}-leader`) as { spec: { holderIdentity?: string } };
  t.equal(lease.spec.holderIdentity, '', 'nobody holds it: a standby can take over at once');
});
