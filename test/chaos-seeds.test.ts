// The chaos engine in every `npm test`: a fixed set of seeds, each a short exploration of the
// operations platform teams perform (test/support/chaos/explore/), against the compiled server on
// the local cluster, at a tenth of production's durations, with every invariant checked. A
// failure prints the seed, the command that replays it and the operation log. Longer
// explorations: `npm run chaos -- --seed N --minutes M` (docs/reliability.md).
import t from 'tap';

// Before anything heavy loads: the runner reads the comment and extends its deadline for this file.
t.setTimeout(900_000);
t.comment('timeout=900000');
const { drawSchedule } = await import('./support/chaos/explore/schedule.js');
const { runChaos, violationTotal } = await import('./support/chaos/explore/run.js');
const { textReport } = await import('./support/chaos/explore/report.js');
const { sizesAt } = await import('./support/chaos/explore/sizes.js');
const { INVARIANTS } = await import('./support/chaos/explore/invariants/ledger.js');

/**
 * Seeds chosen for what their first steps cover, in both TLS modes: a drain honouring the budget, a
 * rule renamed during a kube-apiserver restart, an API outage during a restart (4, generate); the
 * leader SIGKILLed during a rename, cert-manager's reissue and a new CA key (9, files).
 */
const SEEDS = [4, 9] as const;
const STEPS = 3;

t.test('a seed names one schedule: drawn again, the same; another seed, another', async (t) => {
  t.same(drawSchedule(9), drawSchedule(9), 'replayed');
  t.notSame(drawSchedule(9).steps.slice(0, 5), drawSchedule(10).steps.slice(0, 5));
  t.equal(drawSchedule(4).mode, 'generate');
  t.equal(drawSchedule(9).mode, 'files');
});

for (const seed of SEEDS) {
  t.test(`seed ${seed}: ${STEPS} steps of operations under load, every invariant holds`, async (t) => {
    const result = await runChaos({ seed, minutes: 60, steps: STEPS, ...sizesAt(0.1), ratePerSecond: 4, slowStart: 4, log: (line) => t.comment(line) });
    const report = textReport(result);
    t.comment(report);
    t.equal(result.steps.length, STEPS, 'every step ran');
    t.ok(result.load.sent > 50 && result.calls.calls > result.load.sent, `a real load: ${result.load.sent} writes, ${result.calls.calls} webhook calls`);
    t.ok(result.load.admitted > 0 && result.load.denied > 0, 'admitted and denied writes both');
    for (const [invariant, meaning] of Object.entries(INVARIANTS)) {
      // The first violation rides in the assertion's name: CI's tail lists failed assertions only.
      const first = result.firstViolations.find((v) => v.invariant === invariant);
      const seen = first ? ` (first at ${(first.atMs / 1000).toFixed(1)} s: ${first.what.slice(0, 600)})` : '';
      t.equal(result.violations[invariant as keyof typeof INVARIANTS], 0, `${invariant}: ${meaning}${seen}`);
    }
    if (violationTotal(result) > 0) t.comment(`replay with the command above; the report holds the operation log`);
  });
}
