import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { shippedRbac } from './support/manifests/shipped-rbac.js';

t.test('the shipped RBAC lets the server run its whole lifecycle, with no request refused', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.setRbac(await shippedRbac(NAMESPACE));

  const replica = await cluster.startReplica(t, 'kas-a');
  t.ok(cluster.configuration('validating') && cluster.configuration('mutating'), 'registered');
  await cluster.api.waitForRequest((r) => r.verb === 'watch' && r.resource === 'validatingwebhookconfigurations', { phase: 'started', timeoutMs: EVENT_MS });

  const deletedAt = performance.now();
  cluster.api.store.delete('mutatingwebhookconfigurations', undefined, NAME);
  await cluster.api.waitForRequest((r) => r.verb === 'create' && r.resource === 'mutatingwebhookconfigurations' && r.startedAt > deletedAt && r.status === 201, { timeoutMs: EVENT_MS });

  cluster.api.store.scaleDeployment(NAMESPACE, NAME, 0);
  t.equal((await replica.child.stop()).code, 0);
  t.notOk(cluster.configuration('validating'), 'torn down');
  const refused = cluster.api.requests.filter((r) => r.status === 403).map((r) => `${r.verb} ${r.resource}/${r.name ?? ''}`);
  t.same(refused, [], 'start, register, watch, reconcile, lease, Secret and teardown all within the shipped rules');
});

t.test('anything beyond the shipped RBAC is refused, and the server says what and why', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.setRbac(await shippedRbac(NAMESPACE));
  // Another configuration name is outside the ClusterRole's resourceNames.
  const replica = cluster.spawnReplica(t, 'kas-a', ['--config-name', 'someone-elses-webhooks']);
  const exit = await replica.child.exit();
  t.equal(exit.code, 1);
  t.match(replica.child.logs.find((l) => l.msg === 'startup failed; shutting down'), {
    error: /registering the (mutating|validating) webhook configuration failed: 403 Forbidden: .*cannot get resource "(mutating|validating)webhookconfigurations"/,
  });
  t.ok(cluster.api.requests.some((r) => r.status === 403 && r.name === 'someone-elses-webhooks'));
});
