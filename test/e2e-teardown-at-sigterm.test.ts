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
