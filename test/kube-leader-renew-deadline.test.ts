// A leader that cannot renew steps down at the renew deadline, counted from its last successful
// renewal, even while a Lease request is still in flight: before a standby may take the Lease.
import t, { type Test } from 'tap';
import { once } from 'node:events';
import pino from 'pino';
import { LeaderElector } from '../src/registration/leader-election.js';
import type { Fault } from '../local-cluster/fake-apiserver/index.js';
import { startInProcessKube } from './support/kube/in-process-kube.js';
import { within } from './support/deadline.js';

const NS = 'kas';
const LEASE_DURATION_MS = 4000;
const RENEW_DEADLINE_MS = 2000;
const RETRY_PERIOD_MS = 500;
// Slower than a retry period, faster than a request's own timeout (the renew deadline): an
// overloaded apiserver. Before the fix, a renewal's GET and PUT each had their own timeout and
// the step-down was only checked after both, about retry + 1.8 s + 2 s = 4.3 s after the last
// renewal, when a standby could already have taken the Lease.
const SLOW_GET: Fault = { latencyMs: 1800 };

const cluster = await startInProcessKube(t, NS);
let leases = 0;

async function leaderUnder(t: Test, putFault: Fault) {
  const leaseName = `lease-${++leases}`;
  const events: { type: 'started' | 'stopped'; at: number }[] = [];
  const elector = new LeaderElector({
    api: cluster.kube,
    namespace: NS,
    leaseName,
    identity: 'kas-a',
    leaseDurationMs: LEASE_DURATION_MS,
    renewDeadlineMs: RENEW_DEADLINE_MS,
    retryPeriodMs: RETRY_PERIOD_MS,
    logger: pino({ level: 'silent' }),
  });
  elector.on('started-leading', () => events.push({ type: 'started', at: performance.now() }));
  const stopped = new Promise<number>((resolve) => elector.on('stopped-leading', () => resolve(performance.now())));
  elector.on('stopped-leading', () => events.push({ type: 'stopped', at: performance.now() }));
  const lifetime = new AbortController();
  t.teardown(() => lifetime.abort());
  const running = elector.run(lifetime.signal);
  t.equal(await elector.firstAttempt, true, 'leads from the first attempt');
  const renewals = (r: { verb?: string; resource?: string; name?: string }) => r.verb === 'update' && r.resource === 'leases' && r.name === leaseName;
  await cluster.api.waitForRequest((r) => renewals(r) && r.status === 200, { timeoutMs: 10_000 });

  cluster.api.faults.add({ resource: 'leases', verb: 'get', name: leaseName }, SLOW_GET);
  cluster.api.faults.add({ resource: 'leases', verb: 'update', name: leaseName }, putFault);
  const stoppedAt = await within(20_000, 'the step-down', stopped);
  const lastRenewal = cluster.api.requests.filter((r) => renewals(r) && r.status === 200).at(-1)!;
  const afterMs = Math.round(stoppedAt - lastRenewal.startedAt);
  return { elector, events, afterMs, lifetime, running };
}

for (const [name, fault] of [
  ['a Lease PUT that hangs', { hang: true }],
  ['a Lease PUT slower than the renew deadline', { latencyMs: 6000 }],
] as const) {
  t.test(`${name}, on a slow API: stepped down by the renew deadline, before a standby may take over`, async (t) => {
    const { elector, afterMs, events, lifetime, running } = await leaderUnder(t, fault);
    t.ok(
      afterMs < LEASE_DURATION_MS,
      `stepped down ${afterMs} ms after the last successful renewal (renew deadline ${RENEW_DEADLINE_MS} ms), before a standby could acquire (lease duration ${LEASE_DURATION_MS} ms)`,
    );
    t.same(events.map((e) => e.type), ['started', 'stopped']);

    cluster.api.faults.clear();
    await once(elector, 'started-leading', { signal: AbortSignal.timeout(10_000) });
    t.same(events.map((e) => e.type), ['started', 'stopped', 'started'], 'leads again once the API answers: the record still names it');
    lifetime.abort();
    await running;
  });
}
