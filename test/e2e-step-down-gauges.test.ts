// Gauges that only a leader can know reset when it steps down: an ex-leader still reporting
// kube_admission_configuration_unmanaged 1 keeps the shipped alert (max over the replicas)
// firing for good, since only the leader reads the configurations again. Compiled server, API
// double; the step-down comes from failed Lease renewals (an API outage), the process stays up.
import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE, STEADY_LEASE, type Replica } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';

const UNMANAGED = 'kube_admission_configuration_unmanaged{kind="validating"}';

async function sample(replica: Replica, series: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${replica.healthPort}/metrics`, { signal: AbortSignal.timeout(EVENT_MS) })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Scrapes until `series` reads `value` (bounded): gauges change a moment after the log line that announces why. */
async function settlesAt(replica: Replica, series: string, value: number, timeoutMs = EVENT_MS): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  let seen = await sample(replica, series);
  while (seen !== value && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    seen = await sample(replica, series);
  }
  return seen;
}

function markUnmanaged(cluster: ClusterHarness): void {
  const live = cluster.configuration<{ metadata: { annotations?: Record<string, string> } }>('validating')!;
  live.metadata.annotations = { ...live.metadata.annotations, 'kube-admission-server.io/unmanaged': 'true' };
  cluster.api.store.update('validatingwebhookconfigurations', live as never);
}

// Steady Lease timings (a 10 s renew deadline): a loaded machine must not make the leader flap
// before the outage this test makes on purpose, which then lasts past the renew deadline.
t.test('stepping down resets the unmanaged gauge; leading again reports it again', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', [], STEADY_LEASE);
  markUnmanaged(cluster);
  await replica.child.waitForLog((l) => /left alone until the annotation is removed/.test(l.msg) && l['kind'] === 'validating', EVENT_MS);
  t.equal(await settlesAt(replica, UNMANAGED, 1), 1, 'the leader reports the escape');
  t.equal(await sample(replica, 'kube_admission_leader'), 1);

  cluster.api.faults.add({ resource: 'leases', verb: 'update' }, { status: 503 });
  t.equal(await settlesAt(replica, 'kube_admission_leader', 0, 2 * EVENT_MS), 0, 'stepped down: renewals failed past the renew deadline');
  t.equal(await settlesAt(replica, UNMANAGED, 0), 0, 'an ex-leader reports nothing unmanaged');
  t.match(await replica.child.waitForMessage('stopped being the leader', EVENT_MS), { level: 'info' }, 'the step-down is logged');

  const backFrom = replica.child.logs.length;
  cluster.api.faults.clear();
  await replica.child.waitForLog((l) => replica.child.logs.indexOf(l) >= backFrom && l.msg === 'became the leader', EVENT_MS);
  t.equal(await settlesAt(replica, UNMANAGED, 1), 1, 'leading again, it reports the escape again');
  t.ok(cluster.api.store.get('leases', NAMESPACE, `${NAME}-leader`), 'the Lease exists');
  t.equal((await replica.child.stop()).code, 0);
});
