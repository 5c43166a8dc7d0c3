// What becomes of the leader Lease on every way out of a leader process: released at once where the
// API answers, left to expire (and no longer renewed) where it cannot be, always within the bound.
import t, { type Test } from 'tap';
import { ClusterHarness, type Replica } from './support/kube/cluster-harness.js';
import { EXIT_MARGIN_MS } from './support/deadline.js';
import { leaseSpec } from './support/kube/lease-history.js';

async function leader(t: Test, args: string[] = []): Promise<{ cluster: ClusterHarness; replica: Replica }> {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', args);
  t.match(replica.child.logs.find((l) => l.msg === 'registered as the leader'), { role: 'leader' });
  t.equal(leaseSpec(cluster.api.store).holderIdentity, 'kas-a', 'it holds the Lease');
  return { cluster, replica };
}

const summary = (replica: Replica) => replica.child.logs.find((l) => l.msg === 'shutdown complete' || l.msg === 'shutdown finished with problems');

/** The Lease still names the dead leader and was not renewed after `sinceEpochMs`: it expires on its own. */
function leftToExpire(t: Test, cluster: ClusterHarness, sinceEpochMs: number): void {
  const spec = leaseSpec(cluster.api.store);
  t.equal(spec.holderIdentity, 'kas-a', 'not released: the API could not be reached, or there was no time');
  const renewedAt = new Date(spec.renewTime ?? 0).getTime();
  t.ok(renewedAt <= sinceEpochMs, 'and no longer renewed: a standby takes it once the lease duration has passed');
}

t.test('SIGINT in cluster mode is a graceful shutdown: the Lease is released', async (t) => {
  const { cluster, replica } = await leader(t, ['--teardown', 'never']);
  const exit = await replica.child.stop('SIGINT');
  t.equal(exit.code, 0);
  t.match(summary(replica), { msg: 'shutdown complete', steps: { 'lease-release': /^ok/ } });
  t.equal(leaseSpec(cluster.api.store).holderIdentity, '', 'released: a standby can take it at once');
});

t.test('503s and 429s with Retry-After on the release (a throttled or restarting API): retried within the deadline, released', async (t) => {
  // The delay keeps the release for after the faults are in; renewals stopped at the SIGTERM.
  const { cluster, replica } = await leader(t, ['--teardown', 'never', '--shutdown-delay', '1s']);
  replica.child.process.kill('SIGTERM');
  await replica.child.waitForMessage('shutdown requested');
  const stoppedAt = performance.now();
  const lease = { resource: 'leases', verb: 'update' } as const;
  cluster.api.faults.add(lease, { status: 503, retryAfterSeconds: 1 }, { times: 1 });
  cluster.api.faults.add(lease, { status: 429, retryAfterSeconds: 1 }, { times: 1 });
  const exit = await replica.child.exit();
  t.equal(exit.code, 0, 'a clean shutdown');
  t.match(summary(replica), { msg: 'shutdown complete', steps: { 'lease-release': /^ok/ } });
  const updates = cluster.api.requests.filter((r) => r.resource === 'leases' && r.verb === 'update' && r.startedAt > stoppedAt);
  t.same(updates.map((r) => r.status), [503, 429, 200], 'both failures met, then the release written');
  const gaps = updates.slice(1).map((r, i) => r.startedAt - updates[i]!.endedAt!);
  t.ok(gaps.length === 2 && gaps.every((ms) => ms >= 950), `each retry waited the Retry-After (${gaps.map(Math.round).join(', ')} ms)`);
  t.equal(leaseSpec(cluster.api.store).holderIdentity, '', 'released: a standby can take it at once');
});

t.test('the API hanging at shutdown: the release times out inside the deadline, exit 1, the Lease expires on its own', async (t) => {
  const { cluster, replica } = await leader(t, ['--teardown', 'never', '--shutdown-timeout', '3s']);
  cluster.api.faults.add({}, { hang: true });
  const hungAt = Date.now();
  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 1, 'a release that did not happen is a failed shutdown');
  t.match(summary(replica), { steps: { teardown: /^skipped/, 'server-close': /^ok/, 'lease-release': /^timed-out/ } }, 'the release step, not luck, ended at the deadline');
  t.ok(exit.ms < 3000 + EXIT_MARGIN_MS, `exit ${Math.round(exit.ms)} ms after SIGTERM (deadline 3 s)`);
  leftToExpire(t, cluster, hungAt);
});

t.test('the default 5 s deadline with the API hanging: teardown cut at 4 s, release cut at 5 s, exit 1', async (t) => {
  const { cluster, replica } = await leader(t, ['--teardown', 'always']);
  cluster.api.faults.add({}, { hang: true });
  const hungAt = Date.now();
  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 1);
  const steps = summary(replica)?.['steps'] as Record<string, string> | undefined;
  t.match(steps, { teardown: /^timed-out/, 'lease-release': /^timed-out/ });
  const teardownMs = Number(/^timed-out (\d+)ms/.exec(steps?.['teardown'] ?? '')?.[1]);
  t.ok(teardownMs >= 4000 - 50, `the DELETEs had their 4 s (${teardownMs} ms) and were cut then`);
  t.ok(exit.ms >= 4000, `so the exit came after the teardown budget (${Math.round(exit.ms)} ms)`);
  t.ok(exit.ms < 5000 + EXIT_MARGIN_MS, `and within the default 5 s deadline (${Math.round(exit.ms)} ms)`);
  t.ok(cluster.configuration('validating'), 'the hung DELETEs deleted nothing');
  leftToExpire(t, cluster, hungAt);
});

t.test('a second SIGTERM exits at once: no release, the Lease expires on its own', async (t) => {
  const { cluster, replica } = await leader(t, ['--teardown', 'never', '--shutdown-delay', '20s']);
  replica.child.process.kill('SIGTERM');
  await replica.child.waitForMessage('shutdown requested');
  const secondAt = Date.now();
  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 1, 'exit 1: the graceful shutdown did not finish');
  t.ok(exit.ms < EXIT_MARGIN_MS, `exited ${Math.round(exit.ms)} ms after the second signal, not after the 20 s delay`);
  t.match(replica.child.stderr, /second SIGTERM: exiting at once/);
  t.notOk(summary(replica), 'cut short: no shutdown summary');
  leftToExpire(t, cluster, secondAt);
  t.ok(cluster.configuration('validating'), 'the configurations stay');
});
