import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/cluster-harness.js';

const deletesOf = (cluster: ClusterHarness) =>
  cluster.api.requests.filter((r) => r.verb === 'delete' && r.resource?.endsWith('webhookconfigurations'));

t.test('Deployment deleted: SIGTERM deletes both configurations concurrently, then exits 0', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a');
  cluster.api.store.delete('deployments', NAMESPACE, NAME);
  cluster.api.faults.add({ resource: 'mutatingwebhookconfigurations', verb: 'delete' }, { latencyMs: 300 });
  cluster.api.faults.add({ resource: 'validatingwebhookconfigurations', verb: 'delete' }, { latencyMs: 300 });

  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 0);
  t.notOk(cluster.configuration('mutating'), 'mutating configuration deleted');
  t.notOk(cluster.configuration('validating'), 'validating configuration deleted');
  const [first, second] = deletesOf(cluster);
  t.ok(first && second, 'two DELETEs');
  t.ok(first!.startedAt < second!.endedAt! && second!.startedAt < first!.endedAt!, 'the DELETEs were in flight at the same time');
  t.match(replica.child.logs.find((l) => l.msg === 'deleting the webhook configurations'), { why: /Deployment kube-admission-server is gone|ReplicaSet/ });
  t.match(replica.child.logs.find((l) => l.msg === 'shutdown complete'), { steps: { teardown: /^ok/, 'server-close': /^ok/, 'lease-release': /^ok/ } });
  const lease = cluster.api.store.get('leases', NAMESPACE, `${NAME}-leader`) as { spec: { holderIdentity?: string } };
  t.equal(lease.spec.holderIdentity ?? '', '', 'the lease was released');
});

t.test('rolling update: the old leader gets SIGTERM, the configurations stay and admission never fails', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-old', 'kas-new'], 2);
  // The delay covers endpoint propagation: kube-apiserver may still call the old pod briefly.
  const old = await cluster.startReplica(t, 'kas-old', ['--shutdown-delay', '1s']);
  const next = await cluster.startReplica(t, 'kas-new');
  t.match(next.child.logs.find((l) => l.msg === 'serving as a follower'), { role: 'follower' });
  let target = old.port;
  const caller = cluster.caller(t, () => target);
  const pod = podFixture({ app: 'web' });

  const stopping = old.child.stop('SIGTERM');
  const results = [];
  for (let i = 0; i < 20; i++) {
    results.push(await caller.admit({ operation: 'CREATE', object: pod, kind: POD_KIND, resource: POD_RESOURCE }));
    if (i === 5) target = next.port; // within the delay, the endpoints move to the new pod
  }
  t.equal((await stopping).code, 0);
  t.same(results.filter((r) => !r.allowed), [], 'every admission call succeeded during the rollover');
  t.equal(deletesOf(cluster).length, 0, 'no DELETE: a rolling update must not unregister enforcement');
  t.ok(cluster.configuration('validating') && cluster.configuration('mutating'));
  t.match(old.child.logs.find((l) => l.msg === 'keeping the webhook configurations'), { why: /wants 2 replicas/ });

  await next.child.waitForMessage('became the leader', 10_000);
  t.pass('the standby took over the released lease');
});

t.test('SIGTERM under admission load while the DELETEs are slow: every request is answered, new connections too', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a');
  cluster.api.store.scaleDeployment(NAMESPACE, NAME, 0);
  cluster.api.faults.add({ resource: 'validatingwebhookconfigurations', verb: 'delete' }, { latencyMs: 1500 });
  cluster.api.faults.add({ resource: 'mutatingwebhookconfigurations', verb: 'delete' }, { latencyMs: 1500 });

  const keptAlive = cluster.caller(t, () => replica.port);
  const pod = podFixture({ app: 'web' });
  await keptAlive.admit({ operation: 'CREATE', object: pod, kind: POD_KIND, resource: POD_RESOURCE });
  const stopping = replica.child.stop('SIGTERM');
  await cluster.api.waitForRequest((r) => r.verb === 'delete', { phase: 'started', timeoutMs: 5000 });
  const during = [];
  for (let i = 0; i < 10; i++) {
    const fresh = cluster.caller(t, () => replica.port); // a new connection each time
    during.push(fresh.admit({ operation: 'CREATE', object: pod, kind: POD_KIND, resource: POD_RESOURCE }));
    during.push(keptAlive.admit({ operation: 'CREATE', object: pod, kind: POD_KIND, resource: POD_RESOURCE }));
  }
  const answered = await Promise.all(during);
  t.ok(answered.every((r) => r.allowed), `all ${answered.length} requests during the DELETEs were admitted`);
  t.equal((await stopping).code, 0);
  t.notOk(cluster.configuration('validating'), 'scaled to zero: configurations deleted');
});

t.test('API hanging on DELETE: the process still exits within the deadline plus slack, with exit 1', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--teardown', 'always', '--shutdown-timeout', '3s']);
  cluster.api.faults.add({ verb: 'delete' }, { hang: true });
  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 1, 'a teardown that timed out is a failed shutdown');
  t.ok(exit.ms < 3000 + 500, `exit ${Math.round(exit.ms)} ms after SIGTERM (deadline 3 s)`);
  t.match(replica.child.logs.find((l) => l.msg === 'shutdown finished with problems'), { steps: { teardown: /^timed-out/, 'server-close': /^ok/ } });
});
