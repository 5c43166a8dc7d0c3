// The emergency escape sticks: a configuration annotated kube-admission-server.io/unmanaged=true
// keeps a hand-set failurePolicy Ignore through reconcile passes and a leader restart; removing
// the annotation restores it (counted and logged with what changed); scaling the Deployment to
// zero removes everything, the unmanaged configuration included. Compiled server, API double.
import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE, type Replica } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { seedInstall } from './support/kube/owner-chain-fixtures.js';
import type { LogLine } from './support/server/child-server.js';

const ANNOTATION = 'kube-admission-server.io/unmanaged';
// Leadership must not flap under a loaded machine: a new term would log a restore as an update.
// A stopping leader releases the Lease, so the standby still takes over within a retry period.
const STEADY_LEASE = { LEASE_DURATION: '30s', LEASE_RENEW_DEADLINE: '20s', LEASE_RETRY_PERIOD: '500ms' };
type Stored = { metadata: { annotations?: Record<string, string> }; webhooks: { name: string; failurePolicy: string }[] };

/** One sample of the replica's /metrics, by metric name and label text, e.g. `restores{kind="mutating"}`. */
async function sample(replica: Replica, series: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${replica.healthPort}/metrics`, { signal: AbortSignal.timeout(EVENT_MS) })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function handSetIgnore(cluster: ClusterHarness, annotate: boolean): void {
  const live = cluster.configuration<Stored>('validating')!;
  live.metadata.annotations = { ...live.metadata.annotations, ...(annotate ? { [ANNOTATION]: 'true' } : {}) };
  for (const webhook of live.webhooks) webhook.failurePolicy = 'Ignore';
  cluster.api.store.update('validatingwebhookconfigurations', live as never);
}

const policies = (cluster: ClusterHarness) => cluster.configuration<Stored>('validating')!.webhooks.map((w) => w.failurePolicy);
const validatingWrites = (cluster: ClusterHarness, since: number) =>
  cluster.api.requests.filter((r) => r.resource === 'validatingwebhookconfigurations' && ['update', 'create', 'patch'].includes(r.verb ?? '') && r.startedAt > since);

/** Deletes the mutating configuration and waits for the leader's restore: proof that a whole pass ran since. */
async function deleteMutatingAndAwaitRestore(cluster: ClusterHarness, replica: Replica): Promise<LogLine> {
  const before = replica.child.logs.length;
  cluster.api.store.delete('mutatingwebhookconfigurations', undefined, NAME);
  return await replica.child.waitForLog((l) => replica.child.logs.indexOf(l) >= before && l.msg === 'webhook configuration restored: it was deleted' && l['kind'] === 'mutating', EVENT_MS);
}

t.test('the unmanaged annotation keeps a hand-set Ignore through reconciles and a new leader; removing it restores; scale to zero removes all', async (t) => {
  const cluster = await ClusterHarness.start(t);
  seedInstall(cluster.api.store, NAMESPACE, { name: NAME, podNames: ['kas-a', 'kas-b'], replicas: 2 });
  // The bundled example policy enforces deny-privileged and deny-host-namespaces: Fail.
  const a = await cluster.startReplica(t, 'kas-a', [], STEADY_LEASE);
  t.ok(a.child.logs.some((l) => l.msg === 'registered as the leader'));
  t.equal(await sample(a, 'kube_admission_leader'), 1, 'the leader gauge says so');
  t.ok(policies(cluster).includes('Fail'), 'some validating webhook fails closed');

  // An ordinary restore, counted and logged with what changed.
  const restored = await deleteMutatingAndAwaitRestore(cluster, a);
  t.match(restored, { level: 'warn', action: 'created', changes: ['the configuration was absent; created'] });
  t.equal(await sample(a, 'kube_admission_configuration_restores_total{kind="mutating"}'), 1);
  t.equal(await sample(a, 'kube_admission_configuration_restores_total{kind="validating"}'), 0);

  // The escape: annotate and set Ignore by hand.
  const markedAt = performance.now();
  handSetIgnore(cluster, true);
  await a.child.waitForLog((l) => /left alone until the annotation is removed/.test(l.msg) && l['kind'] === 'validating', EVENT_MS);
  await deleteMutatingAndAwaitRestore(cluster, a);
  await deleteMutatingAndAwaitRestore(cluster, a);
  t.ok(policies(cluster).every((p) => p === 'Ignore'), 'the hand-set Ignore stays through later passes');
  t.same(validatingWrites(cluster, markedAt), [], 'the leader wrote nothing to the unmanaged configuration');
  t.equal(await sample(a, 'kube_admission_configuration_unmanaged{kind="validating"}'), 1);

  // A new leader (a rollout, a crash) leaves it alone too.
  const b = await cluster.startReplica(t, 'kas-b', [], STEADY_LEASE);
  t.equal(await sample(b, 'kube_admission_leader'), 0, 'a follower');
  t.equal((await a.child.stop()).code, 0);
  await b.child.waitForMessage('became the leader', EVENT_MS);
  await b.child.waitForLog((l) => /left alone until the annotation is removed/.test(l.msg) && l['kind'] === 'validating', EVENT_MS);
  await deleteMutatingAndAwaitRestore(cluster, b);
  t.ok(policies(cluster).every((p) => p === 'Ignore'), 'still Ignore under the new leader');
  t.ok(cluster.configuration('validating'), 'and still registered: the old leader kept it (the Deployment wants 2)');
  t.equal(await sample(b, 'kube_admission_leader'), 1);

  // Removing the annotation hands it back: restored, counted, logged with the failurePolicy change.
  const live = cluster.configuration<Stored>('validating')!;
  delete live.metadata.annotations![ANNOTATION];
  cluster.api.store.update('validatingwebhookconfigurations', live as never);
  const back = await b.child.waitForLog((l) => /^webhook configuration restored/.test(l.msg) && l['kind'] === 'validating', EVENT_MS);
  // Both enforcing rules are served by one grouped webhook (failurePolicy Fail, timeout 5 s).
  t.match(back['changes'], [/^webhooks\[validating-fail-t5\.[^\]]+\]\.failurePolicy: "Ignore" -> "Fail"$/], 'the log line says what changed');
  t.ok(policies(cluster).includes('Fail'), 'failurePolicy restored');
  t.equal(await sample(b, 'kube_admission_configuration_restores_total{kind="validating"}'), 1);
  t.equal(await sample(b, 'kube_admission_configuration_unmanaged{kind="validating"}'), 0);

  // Scale to zero: everything goes, a configuration marked unmanaged included.
  handSetIgnore(cluster, true);
  await b.child.waitForLog((l) => /left alone until the annotation is removed/.test(l.msg) && b.child.logs.indexOf(l) > b.child.logs.indexOf(back), EVENT_MS);
  cluster.api.store.scaleDeployment(NAMESPACE, NAME, 0); // kubectl scale deployment/kube-admission-server --replicas=0
  t.equal((await b.child.stop()).code, 0);
  t.notOk(cluster.configuration('validating'), 'the unmanaged validating configuration is deleted');
  t.notOk(cluster.configuration('mutating'), 'and the mutating one');
});
