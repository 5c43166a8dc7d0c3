// A process deletes only what is its to delete. In a pod, on the owner chain's proof, any of this
// install's configurations (the replicas share them), never one that calls another install, which
// the leader does not write back either. Out of a cluster, only what the process itself created
// or updated: what it found already as it would write it (an earlier run's) stays. The compiled
// server against the API double, which alone says what was written and deleted.
import t from 'tap';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import { seedInstall } from './support/kube/owner-chain-fixtures.js';
import { configurationDeletes, teardownDecision } from './support/kube/teardown-checks.js';
import { seedOtherInstallsConfiguration, writeRequests } from './support/kube/write-audit.js';

const configurationWrites = (cluster: ClusterHarness, sinceMs: number): string[] => writeRequests(cluster, sinceMs).filter((w) => w.includes('webhookconfigurations/'));

t.test('in a pod, scaled to zero: this install\'s configuration is deleted; one another install took over is neither written back nor deleted', async (t) => {
  const cluster = await ClusterHarness.start(t);
  seedInstall(cluster.api.store, NAMESPACE, { name: NAME, podNames: ['kas-a'], replicas: 1 });
  const replica = await cluster.startReplica(t, 'kas-a');
  t.ok(cluster.configuration('mutating') && cluster.configuration('validating'), 'both registered');

  // Another install of the server, one that writes over any configuration of its name, takes the validating one.
  const takenAt = performance.now();
  const other = seedOtherInstallsConfiguration(cluster.api.store);
  const refused = await replica.child.waitForLog((l) => l.msg === 'reconcile failed; retrying' && /not this install's/.test(String(l['error'])), EVENT_MS);
  t.match(refused, { level: 'error', error: /the validating webhook configuration kube-admission-server is not this install's \(its webhook .* calls service other-install\/kube-admission-server\)/ });
  t.same(configurationWrites(cluster, takenAt), [], 'the leader writes nothing over it');

  cluster.api.store.scaleDeployment(NAMESPACE, NAME, 0);
  const signalledAt = performance.now();
  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 0);
  t.match(await teardownDecision(replica), { teardown: true, why: /scaled to zero/ });
  t.notOk(cluster.configuration('mutating'), "this install's configuration is deleted");
  t.same(cluster.configuration('validating'), other, "the other install's is as it was");
  t.same(configurationWrites(cluster, signalledAt), [`delete mutatingwebhookconfigurations/${NAME} 200`], 'one DELETE, of its own');
  t.match(replica.child.logs.find((l) => l.msg === "left the webhook configuration as it is: it is not this process's to delete"), {
    kind: 'validating',
    why: /^not this install's: its webhook .* calls service other-install\/kube-admission-server$/,
  });
});

t.test('out of a cluster: at its stop a process deletes what it wrote and leaves what an earlier run left as it would write it', async (t) => {
  const cluster = await ClusterHarness.start(t);
  const OUT_OF_A_CLUSTER = { POD_NAME: '' };
  const earlier = await cluster.startReplica(t, 'kas-a', [], OUT_OF_A_CLUSTER);
  await earlier.child.stop('SIGKILL'); // no teardown: both configurations stay behind
  // A hand edit the next run puts back: that configuration it writes, the other it finds as it would write it.
  const validating = cluster.api.store.get('validatingwebhookconfigurations', undefined, NAME)!;
  const webhooks = (validating['webhooks'] as Record<string, unknown>[]).map((w) => ({ ...w, failurePolicy: 'Ignore' }));
  cluster.api.store.update('validatingwebhookconfigurations', { ...validating, webhooks });
  const leftBehind = cluster.configuration('mutating');

  const startedAt = performance.now();
  const next = await cluster.startReplica(t, 'kas-a', [], OUT_OF_A_CLUSTER);
  t.same(configurationWrites(cluster, startedAt), [`update validatingwebhookconfigurations/${NAME} 200`], 'it wrote the validating configuration only');
  const exit = await next.child.stop('SIGTERM');
  t.equal(exit.code, 0);
  t.match(await teardownDecision(next), { teardown: true, why: /not running in a pod/ });
  t.notOk(cluster.configuration('validating'), 'what it wrote is deleted');
  t.same(cluster.configuration('mutating'), leftBehind, 'what it did not write is left as it was');
  t.same(
    configurationDeletes(cluster).map((r) => r.resource),
    ['validatingwebhookconfigurations'],
    'one DELETE',
  );
  t.match(next.child.logs.find((l) => l.msg === "left the webhook configuration as it is: it is not this process's to delete"), { kind: 'mutating', why: 'this process did not write it' });
});
