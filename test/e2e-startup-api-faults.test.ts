// A replica that starts while the API is failing for a moment (a restart, a 5xx burst) retries
// its startup reads instead of exiting: in a rolling update the new pods must come up.
import t from 'tap';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness } from './support/kube/cluster-harness.js';

t.test('503s on the owner ClusterRole and the Lease at startup: retried, the replica becomes the leader and registers', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.faults.add({ resource: 'clusterroles', verb: 'get' }, { status: 503 }, { times: 3 });
  cluster.api.faults.add({ resource: 'leases' }, { status: 500 }, { times: 2 });
  const replica = await cluster.startReplica(t, 'kas-a');
  const retries = replica.child.logs.filter((l) => l.msg === 'reading the owner ClusterRole failed; retrying');
  t.equal(retries.length, 3, 'each failed read was logged and retried');
  // The two configurations are written side by side: wait for each, in no assumed order.
  const owned = { metadata: { ownerReferences: [{ kind: 'ClusterRole', name: 'kube-admission-server' }] } };
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'] as const) {
    const stored = await cluster.api.store.waitFor(resource, undefined, 'kube-admission-server', (o) => o !== undefined, { timeoutMs: EVENT_MS });
    t.match(stored, owned, `${resource}: registered with the ClusterRole as owner`);
  }
  t.equal((await replica.child.stop()).code, 0);
});

t.test('the ClusterRole read hanging past its 5 s deadline at startup: retried, the replica comes up', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.faults.add({ resource: 'clusterroles', verb: 'get' }, { hang: true }, { times: 1 });
  const replica = await cluster.startReplica(t, 'kas-a');
  t.match(replica.child.logs.find((l) => l.msg === 'reading the owner ClusterRole failed; retrying'), { error: /^TimeoutError/ }, 'the timeout was retried');
  t.ok(replica.child.logs.some((l) => l.msg === 'registered as the leader'));
  t.equal((await replica.child.stop()).code, 0);
});
