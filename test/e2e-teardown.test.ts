import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { EVENT_MS, EXIT_MARGIN_MS } from './support/deadline.js';
import { recordLeaseHolders } from './support/kube/lease-history.js';

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

t.test('rolling update: the old leader gets SIGTERM, the configurations stay, admission never fails, and the Lease is handed over at once', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-old', 'kas-new'], 2);
  // A long Lease: a standby that only waited for expiry would need 15 s after the last renewal, so
  // a takeover within a few seconds can only come from the release.
  const lease = { LEASE_DURATION: '15s', LEASE_RENEW_DEADLINE: '10s', LEASE_RETRY_PERIOD: '500ms' };
  // The delay covers endpoint propagation: kube-apiserver may still call the old pod for a moment
  // after it turned unready. Long enough that the calls below land inside it on a busy machine.
  const old = await cluster.startReplica(t, 'kas-old', ['--shutdown-delay', '5s'], lease);
  const next = await cluster.startReplica(t, 'kas-new', [], lease);
  t.match(next.child.logs.find((l) => l.msg === 'serving as a follower'), { role: 'follower' });
  let target = old.port;
  const caller = cluster.caller(t, () => target);
  const pod = podFixture({ app: 'web' });
  const admit = () => caller.admit({ operation: 'CREATE', object: pod, kind: POD_KIND, resource: POD_RESOURCE });

  // A control plane in steady state: every kube-apiserver has called each webhook path already,
  // so its pools hold connections (each keeps its own per path; cold, they cost a TLS handshake
  // each, which on a loaded machine can outlast the delay).
  for (const apiserver of cluster.api.apiservers.keys()) t.ok((await caller.admit({ operation: 'CREATE', object: pod, kind: POD_KIND, resource: POD_RESOURCE, apiserver })).allowed);
  const holders = recordLeaseHolders(cluster.api.store);
  t.teardown(holders.stop);
  const stopping = old.child.stop('SIGTERM');
  // The endpoints controller marks the terminating pod not ready in the slice: until the move,
  // calls still go to the old pod, and they must be answered.
  await old.child.waitForMessage('shutdown requested', EVENT_MS);
  const draining = await fetch(`http://127.0.0.1:${old.healthPort}/readyz`, { signal: AbortSignal.timeout(EVENT_MS) });
  t.equal(draining.status, 200, 'the old pod still reports serving while it drains (kube-proxy falls back to it only if every endpoint is terminating)');
  t.match(await draining.json(), { status: 'draining' });
  const results = [await admit(), await admit()];
  target = next.port; // the endpoints move to the new pod
  for (let i = 0; i < 10; i++) results.push(await admit());
  const exit = await stopping;
  t.equal(exit.code, 0);
  t.same(results.filter((r) => !r.allowed), [], 'every admission call succeeded during the rollover');
  t.equal(deletesOf(cluster).length, 0, 'no DELETE: a rolling update must not unregister enforcement');
  t.ok(cluster.configuration('validating') && cluster.configuration('mutating'));
  t.match(old.child.logs.find((l) => l.msg === 'keeping the webhook configurations'), { why: /wants 2 replicas/ });
  t.match(old.child.logs.find((l) => l.msg === 'shutdown complete'), { steps: { 'lease-release': /^ok/ } }, 'the old leader says it released the Lease');

  await next.child.waitForMessage('became the leader', EVENT_MS);
  const [released, takenOver] = holders.changes;
  t.equal(released?.holder, '', 'the first change of the Lease is the release: holder cleared by the old leader');
  t.equal(takenOver?.holder, 'kas-new', 'then the standby holds it');
  const handOverMs = takenOver!.atMs - released!.atMs;
  t.ok(handOverMs < 5000, `taken over ${Math.round(handOverMs)} ms after the release: well inside the 15 s Lease, so not by expiry`);
  t.ok(released!.atMs <= performance.now() && takenOver!.atMs > released!.atMs, 'release first, takeover second');
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
  await cluster.api.waitForRequest((r) => r.verb === 'delete', { phase: 'started', timeoutMs: EVENT_MS });
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

t.test('API hanging on DELETE: the DELETEs are cut at the deadline minus one second, and the process exits with 1 within the deadline', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--teardown', 'always', '--shutdown-timeout', '3s']);
  cluster.api.faults.add({ verb: 'delete' }, { hang: true });
  const signalledAt = performance.now();
  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 1, 'a teardown that timed out is a failed shutdown');
  t.match(replica.child.logs.find((l) => l.msg === 'shutdown finished with problems'), { steps: { teardown: /^timed-out/, 'server-close': /^ok/ } });

  // What shows the bound came from the code: the server itself gave up on both DELETEs (the API
  // would have held them for ever), not before its 2 s teardown budget, and then exited.
  const deletes = deletesOf(cluster);
  t.equal(deletes.length, 2, 'both DELETEs were sent');
  for (const request of deletes) {
    t.equal(request.status, undefined, `${request.resource}: never answered, the client went away`);
    t.ok(request.endedAt !== undefined && request.endedAt - signalledAt >= 2000 - 50, `${request.resource}: given up ${Math.round(request.endedAt! - signalledAt)} ms after SIGTERM, not before the 2 s budget`);
    t.ok(request.endedAt! <= signalledAt + exit.ms, `${request.resource}: given up before the exit`);
  }
  // Bounded: 3 s plus what a busy machine adds to signal delivery, the log flush and the exit.
  t.ok(exit.ms < 3000 + EXIT_MARGIN_MS, `exit ${Math.round(exit.ms)} ms after SIGTERM (deadline 3 s)`);
});
