// Teardown `auto` decides on the owner chain as it was at SIGTERM: read before the shutdown
// delay, while the ServiceAccount surely still exists, not after it.
import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import type { RequestRecord } from '../local-cluster/fake-apiserver/index.js';
import { seedInstall } from './support/kube/owner-chain-fixtures.js';
import { configurationDeletes, teardownDecision } from './support/kube/teardown-checks.js';

t.test('the chain is read at SIGTERM, before the delay: a Deployment deleted during the delay does not change the decision', async (t) => {
  const cluster = await ClusterHarness.start(t);
  seedInstall(cluster.api.store, NAMESPACE, { name: NAME, podNames: ['kas-a'], replicas: 2 });
  const DELAY_MS = 3000;
  const replica = await cluster.startReplica(t, 'kas-a', ['--shutdown-delay', `${DELAY_MS}ms`]);
  const signalledAt = performance.now();
  const stopping = replica.child.stop('SIGTERM');
  const deploymentRead: RequestRecord = await cluster.api.waitForRequest((r) => r.verb === 'get' && r.resource === 'deployments' && r.startedAt > signalledAt, { timeoutMs: 10_000 });
  cluster.api.store.delete('deployments', NAMESPACE, NAME); // during the delay: too late to count
  const deletedAt = performance.now();
  const exit = await stopping;
  t.equal(exit.code, 0);
  t.ok(deletedAt < signalledAt + DELAY_MS, `the Deployment was deleted ${Math.round(deletedAt - signalledAt)} ms after SIGTERM, within the ${DELAY_MS} ms delay`);
  t.ok(exit.ms >= DELAY_MS, 'the process kept serving through the delay');
  const readAfterMs = Math.round(deploymentRead.startedAt - signalledAt);
  t.ok(readAfterMs < DELAY_MS, `the Deployment was read ${readAfterMs} ms after SIGTERM, before the ${DELAY_MS} ms delay ended`);
  t.match(await teardownDecision(replica), { teardown: false, why: /Deployment kube-admission-server wants 2 replicas/ });
  t.same(configurationDeletes(cluster), [], 'no DELETE');
  t.same(
    cluster.api.requests.filter((r) => r.verb === 'get' && r.resource === 'deployments' && r.startedAt > signalledAt).length,
    1,
    'the chain is read once, not again after the delay',
  );
});

t.test('scaled to zero: the configurations are deleted at SIGTERM, during the delay, not after it (every endpoint left the Service at SIGTERM)', async (t) => {
  // Found by the chaos exploration (seed 101): with the DELETEs after the 3 s delay, every call to
  // a Fail webhook was refused for those 3 s, because no ready endpoint was left.
  const cluster = await ClusterHarness.start(t);
  seedInstall(cluster.api.store, NAMESPACE, { name: NAME, podNames: ['kas-a'], replicas: 2 });
  const DELAY_MS = 3000;
  const replica = await cluster.startReplica(t, 'kas-a', ['--shutdown-delay', `${DELAY_MS}ms`]);
  const deployment = cluster.api.store.get('deployments', NAMESPACE, NAME)!;
  cluster.api.store.update('deployments', { ...deployment, spec: { ...(deployment['spec'] as object), replicas: 0 } });
  const signalledAt = performance.now();
  const stopping = replica.child.stop('SIGTERM');
  const deleted = await cluster.api.waitForRequest((r) => r.verb === 'delete' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > signalledAt, { timeoutMs: 20_000 });
  const exit = await stopping;
  t.equal(exit.code, 0);
  t.match(await teardownDecision(replica), { teardown: true, why: /scaled to zero/ });
  t.ok(deleted.startedAt - signalledAt < DELAY_MS, `the DELETE went out ${Math.round(deleted.startedAt - signalledAt)} ms after SIGTERM, inside the ${DELAY_MS} ms delay`);
  t.ok(exit.ms >= DELAY_MS, 'the process kept serving through the delay');
  t.notOk(cluster.configuration('validating') ?? cluster.configuration('mutating'), 'both configurations gone');
});

t.test('scaled to zero while the Lease changes hands: a replica that never registered deletes the configurations too', async (t) => {
  // Found by the chaos exploration (seed 105): a scale to zero right after a rollout hit replicas
  // that had not led yet; the one that registered was gone, nobody deleted, and every call to the
  // Fail webhooks was refused while the Deployment stayed at zero.
  const cluster = await ClusterHarness.start(t);
  seedInstall(cluster.api.store, NAMESPACE, { name: NAME, podNames: ['kas-a', 'kas-b'], replicas: 2 });
  const leader = await cluster.startReplica(t, 'kas-a');
  const follower = await cluster.startReplica(t, 'kas-b');
  t.match(follower.child.logs.find((l) => l.msg === 'serving as a follower'), { role: 'follower' });
  // The leader dies without a word (its Lease, 15 s, has not expired): the follower has not led.
  await leader.child.stop('SIGKILL');
  const deployment = cluster.api.store.get('deployments', NAMESPACE, NAME)!;
  cluster.api.store.update('deployments', { ...deployment, spec: { ...(deployment['spec'] as object), replicas: 0 } });
  const exit = await follower.child.stop('SIGTERM');
  t.equal(exit.code, 0);
  t.notOk(follower.child.logs.some((l) => l.msg === 'became the leader'), 'the follower never led');
  t.match(await teardownDecision(follower), { msg: 'deleting the webhook configurations', teardown: true, why: /scaled to zero/ });
  t.equal(configurationDeletes(cluster).length, 2, 'both configurations deleted');
  t.notOk(cluster.configuration('validating') ?? cluster.configuration('mutating'), 'nothing left routing to a Service without endpoints');
});
