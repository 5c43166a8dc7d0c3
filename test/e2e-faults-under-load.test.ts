// Faults under admission load: two replicas of the compiled server in files mode against the API
// test double, a steady mixed load through the Service model, and every kind of fault once (the
// engine in test/support/chaos, shared with `npm run soak`).
import t from 'tap';
import { runScenario } from './support/chaos/scenario.js';
import { ciSchedule } from './support/chaos/schedule.js';
import { markdownReport, summarize } from './support/chaos/report.js';

const SHUTDOWN_TIMEOUT_MS = 3000;

t.test('the API slow, hanging, failing, restarting; rotations; follower restart; leader SIGTERM and SIGKILL: under load, nothing goes wrong', async (t) => {
  const result = await runScenario(
    {
      rounds: ciSchedule(),
      registeringReplicas: 2,
      servingOnlyReplica: false,
      ratePerSecond: 15,
      workers: 4,
      // Waits end as soon as their event happens; 60 s only bounds a broken run on a loaded machine.
      sizes: { holdMs: 1500, downMs: 1500, latencyMs: 700, waitMs: 60_000 },
      convergenceTimeoutMs: 60_000,
      shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
      warmupMs: 0,
      sampleEveryMs: 2000,
      env: {},
      log: (line) => t.comment(line),
    },
    t,
  );
  const summary = summarize(result);
  t.comment(markdownReport(result, summary, 'npx tap test/e2e-faults-under-load.test.ts'));
  const { load } = result;

  t.ok(load.byClass.allow > 20 && load.byClass.mutate > 20 && load.byClass.deny > 20, `a real mixed load: ${JSON.stringify(load.byClass)}`);
  t.equal(load.failuresByReason['allowed-object-refused'] ?? 0, 0, 'no object the policy allows was refused');
  t.equal(load.failuresByReason['denied-object-admitted'] ?? 0, 0, 'no object the policy denies was admitted');
  t.equal((load.failuresByReason['mutation-missing'] ?? 0) + (load.failuresByReason['unexpected-mutation'] ?? 0), 0, 'every mutation correct');
  t.equal(load.failed, 0, `no wrong outcome of any kind: ${JSON.stringify(load.failureSamples.slice(0, 3))}`);

  t.same(summary.unconverged.map((s) => `${s.step}: ${s.problem}`), [], 'every step converged: configurations as desired, caBundle = ca.crt, a live leader');
  t.same(result.finalDivergence, [], 'the final state is the desired one');
  t.same(result.rotations, { leafRenewals: 1, caRollovers: 1 }, 'a leaf renewal and a CA rollover happened under load');
  t.same(result.replicaFailures, [], 'every replica started, none crashed');
  t.equal(result.configurationDeletions, 0, 'no configuration was ever deleted: the rolling restarts kept enforcement');

  const sigterms = result.shutdowns.filter((s) => s.signal === 'SIGTERM');
  t.equal(sigterms.length, 2 + 2, 'the follower restart, the leader SIGTERM, and both replicas at the end');
  t.ok(result.shutdowns.some((s) => s.signal === 'SIGKILL' && s.wasLeader), 'the leader was killed with SIGKILL');
  t.ok(sigterms.some((s) => s.wasLeader), 'the leader got SIGTERM');
  for (const s of sigterms) {
    t.ok(s.ms <= s.deadlineMs, `${s.podName}: SIGTERM -> exit in ${s.ms} ms (deadline ${s.deadlineMs} ms)`);
    t.equal(s.code, 0, `${s.podName}: clean shutdown`);
    if (s.wasLeader) t.match(s.teardown, /^keeping the webhook configurations: .*wants 2 replicas/, `${s.podName}: teardown auto kept the registrations`);
  }
});
