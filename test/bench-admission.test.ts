// The admission bench's pieces (bench/admission*.ts, binary-target.ts, review-profile.ts): what it
// starts and checks before it measures, and how it reads profiles. No timing is asserted here.
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerProblem, checkAnswers, planFromEnvironment } from '../bench/admission-servers.js';
import { compareBuilds, roundOrder, type ScenarioResult } from '../bench/admission.js';
import { builtInRulesPolicy, registeredPaths, startBinary } from '../bench/binary-target.js';
import { podCreateReview } from '../bench/pod-review.js';
import { frameFunction, frameOrigin, scaleToRunTime, selfTimeInWindow, type CpuProfile } from '../bench/review-profile.js';
import { stopTarget } from '../bench/target-process.js';
import { MAIN_JS } from './support/server/child-server.js';
import { STARTUP_MS } from './support/deadline.js';

const UID = 'b1e5c0de-0000-4000-8000-000000000001';

function answer(response: Record<string, unknown>): { apiVersion: string; kind: string; response: { uid: string; allowed: boolean } } {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: UID, allowed: true, ...response } };
}

const base64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');

t.test('the compiled binary serving the bench policy gives the answers the bench measures, grouped as users run it or not', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-bench-binary-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const review = podCreateReview();
  const uid = (review.request as { uid: string }).uid;
  for (const grouping of ['auto', 'none'] as const) {
    const policyFile = join(dir, `${grouping}.yaml`);
    await writeFile(policyFile, builtInRulesPolicy(grouping));
    const target = await startBinary({ entry: MAIN_JS, cwd: dir, policyFile, certDir: join(dir, `certs-${grouping}`), startTimeoutMs: STARTUP_MS });
    t.teardown(() => stopTarget(target.child));
    t.same(
      target.paths,
      grouping === 'auto'
        ? { validate: '/validate/validating-fail-t5/require-labels?timeout=10s', mutate: '/mutate/mutating-ignore-t5/default-labels?timeout=10s' }
        : { validate: '/validate/require-labels?timeout=10s', mutate: '/mutate/default-labels?timeout=10s' },
      `grouping: ${grouping}: the paths kube-apiserver calls`,
    );
    const server = { key: 'binary' as const, label: `binary, grouping ${grouping}`, child: target.child, port: target.port, paths: target.paths, caPem: target.caPem, profileFile: undefined };
    await t.resolves(checkAnswers(server, JSON.stringify(review), uid), 'allowed, and the one label added, over TLS verified against its generated CA');
    await t.rejects(checkAnswers(server, JSON.stringify(review), 'another-uid'), /uid/, 'a check that can fail');
    await stopTarget(target.child);
  }
});

t.test('an answer the bench must not measure is named', async (t) => {
  const added = [{ op: 'add', path: '/metadata/labels/policy.example.com~1checked', value: 'true' }];
  t.equal(answerProblem('validate', UID, 200, answer({})), undefined, 'an allow');
  t.equal(answerProblem('mutate', UID, 200, answer({ patch: base64(added), patchType: 'JSONPatch' })), undefined, 'an allow adding the label');
  t.match(answerProblem('validate', UID, 404, answer({})), /status 404/);
  t.match(answerProblem('validate', UID, 200, answer({ allowed: false, status: { code: 403, message: 'no' } })), /not allowed/);
  t.match(answerProblem('validate', 'other', 200, answer({})), /uid/);
  t.match(answerProblem('validate', UID, 200, answer({ patch: base64(added) })), /patch where none was due/);
  t.match(answerProblem('mutate', UID, 200, answer({})), /patch undefined/, 'a mutation that changed nothing');
  t.match(answerProblem('mutate', UID, 200, answer({ patch: base64([...added, { op: 'add', path: '/metadata/labels/x', value: 'y' }]) })), /patch/, 'one change too many');
});

t.test("the paths come from the ready line's registered list, one of each kind", async (t) => {
  t.same(registeredPaths({ registered: ['/validate/validating-fail-t5/a.b', '/mutate/mutating-ignore-t5/c'] }), {
    validate: '/validate/validating-fail-t5/a.b?timeout=10s',
    mutate: '/mutate/mutating-ignore-t5/c?timeout=10s',
  });
  t.throws(() => registeredPaths({ registered: ['/validate/a', '/validate/b', '/mutate/c'] }), /one validating and one mutating/);
  t.throws(() => registeredPaths({}), /one validating and one mutating/);
});

t.test('the plan: what users run by default, the knobs refused when misspelt', async (t) => {
  const plan = planFromEnvironment({}, '/checkout');
  t.same(plan.servers, ['binary', 'init']);
  t.equal(plan.entry, 'bundle');
  t.equal(plan.grouping, 'auto');
  t.equal(plan.baseline, undefined);
  const two = planFromEnvironment({ BENCH_BASELINE: '/other/checkout', BENCH_BINARY_ENTRY: 'tsc', BENCH_ADMISSION_SERVERS: 'binary,in-process' }, '/checkout');
  t.equal(two.baseline, '/other/checkout');
  t.equal(two.baselineEntry, 'tsc', "the baseline's entry follows this build's unless told");
  t.same(two.servers, ['binary', 'in-process']);
  t.throws(() => planFromEnvironment({ BENCH_ADMISSION_SERVERS: 'binary,inprocess' }, '/checkout'), /inprocess unknown/);
  t.throws(() => planFromEnvironment({ BENCH_GROUPING: 'grouped' }, '/checkout'), /BENCH_GROUPING/);
  t.throws(() => planFromEnvironment({ BENCH_BASELINE_ENTRY: 'image' }, '/checkout'), /BENCH_BASELINE_ENTRY/);
});

t.test('rounds alternate their order; two builds compare this one over the baseline', async (t) => {
  t.same(roundOrder(['r', 'a', 'b'], 0), ['r', 'a', 'b']);
  t.same(roundOrder(['r', 'a', 'b'], 1), ['b', 'a', 'r']);
  t.same(roundOrder(['r', 'a', 'b'], 2), ['r', 'a', 'b']);
  const run = (requestsPerSecond: number, cpuUsPerRequest: number, p99Ms: number): ScenarioResult => ({ requestsPerSecond, cpuUsPerRequest, p99Ms } as ScenarioResult);
  t.same(compareBuilds(run(12_000, 40, 3), run(10_000, 50, 2)), { throughputRatio: 1.2, cpuRatio: 0.8, p99Ratio: 1.5 });
});

t.test('a profile is read inside the measured window, per origin, idle left out', async (t) => {
  const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(idle)') },
      { id: 2, callFrame: frame('parseJsonBody', 'file:///w/checkout/dist/src/server/request-errors.js', 24) },
      { id: 3, callFrame: frame('parseJsonBody', 'file:///tmp/p/node_modules/kube-admission-server/dist/src/server/request-errors.js', 24) },
      { id: 4, callFrame: frame('writeUtf8String') },
      { id: 5, callFrame: frame('', 'file:///w/checkout/dist/bundle/main.js', 765) },
    ],
    startTime: 1_000,
    endTime: 2_000,
    // Samples at 1100, 1200, 1300, 1400, 1500, 1600; each worth the time to the next.
    samples: [2, 2, 1, 3, 4, 5],
    timeDeltas: [100, 100, 100, 100, 100, 100],
  };
  const inside = selfTimeInWindow(profile, { fromUs: 1_150, toUs: 1_500 }, frameOrigin);
  t.same(Object.fromEntries(inside), { 'src/server': 200, 'native code (C++, builtins, RegExp)': 100 }, "the sample at 1100 and the one at 1600 are outside; the idle one is left out; a project's installed copy is the same origin");
  t.same(Object.fromEntries(selfTimeInWindow(profile, { fromUs: 0, toUs: 10_000 }, frameFunction)), { parseJsonBody: 300, writeUtf8String: 100, '(anonymous) dist/bundle/main.js:766:1': 0 }, 'functions by name across builds; the last sample has no next');
  t.equal(frameOrigin(frame('x', 'file:///w/dist/bundle/main.js')), 'the bundle (server and dependencies)');
  t.equal(frameOrigin(frame('x', 'file:///w/node_modules/@fastify/helmet/index.js')), '@fastify/helmet');
  t.equal(frameOrigin(frame('x', 'node:internal/streams/writable')), 'node: built-in modules');
  t.equal(scaleToRunTime(inside, 150), 0.5, 'sampled 300 µs of which the main thread ran 150');
  t.equal(scaleToRunTime(inside, 600), 1, 'never scaled up');
});
