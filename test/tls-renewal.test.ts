import t from 'tap';
import type { X509Certificate } from 'node:crypto';
import { createGeneratedMaterial } from '../src/tls/factory.js';
import { notAfter, parseCertificates } from '../src/tls/pem.js';
import { chainRoot } from '../src/tls/validate.js';
import type { ServingMaterial } from '../src/tls/types.js';
import { MemorySecretApi } from './support/memory-secret-api.js';
import { TestClock } from './support/tls-clock.js';
import { DAY_MS, capturingLogger, metricsProbe, nextEvent } from './support/tls-fixtures.js';

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (days: number, extraMs = 0): Date => new Date(T0.getTime() + days * DAY_MS + extraMs);

/** Short lifetimes so that a rollover fits in a few clock steps. */
function generator(api: MemorySecretApi, clock: TestClock, checkIntervalMs = 600_000) {
  const probe = metricsProbe();
  const log = capturingLogger();
  const source = createGeneratedMaterial({
    serviceName: 'hook',
    namespace: 'ops',
    extraSans: [],
    local: false,
    certDir: '/nonexistent',
    secretApi: api,
    caValidityDays: 100,
    caRenewBeforeDays: 30,
    leafValidityDays: 20,
    leafRenewBeforeDays: 5,
    caPropagationMs: DAY_MS,
    checkIntervalMs,
    now: clock.now,
    logger: log.logger,
    metrics: probe.metrics,
  });
  return { source, probe, log };
}

/** What a refresh announced, in order. */
async function refreshRecording(source: ReturnType<typeof generator>['source']): Promise<string[]> {
  const events: string[] = [];
  const onBundle = (): number => events.push('ca-bundle-change');
  const onServing = (): number => events.push('serving-change');
  source.on('ca-bundle-change', onBundle);
  source.on('serving-change', onServing);
  try {
    await source.refresh(AbortSignal.timeout(20_000));
  } finally {
    source.off('ca-bundle-change', onBundle);
    source.off('serving-change', onServing);
  }
  return events;
}

function describe(material: ServingMaterial): { bundle: X509Certificate[]; leaf: X509Certificate; issuer: X509Certificate | undefined } {
  const bundle = parseCertificates(material.caBundlePem);
  const [leaf, ...rest] = parseCertificates(material.certPem);
  return { bundle, leaf: leaf!, issuer: chainRoot(leaf!, rest, bundle) };
}

t.test('leaf renewal and CA rollover with overlap, driven by the clock', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(T0);
  const { source, probe } = generator(api, clock);
  const initial = describe(await source.load(AbortSignal.timeout(20_000)));
  const ca1 = initial.bundle[0]!;
  t.equal(initial.bundle.length, 1);
  t.equal(initial.issuer?.fingerprint256, ca1.fingerprint256);

  // Leaf renewal: 5 days before its 20-day expiry, same CA, serving change only.
  clock.set(at(14));
  t.same(await refreshRecording(source), [], 'nothing due on day 14');
  clock.set(at(16));
  t.same(await refreshRecording(source), ['serving-change'], 'leaf renewed on day 16');
  let now = describe(source.current());
  t.equal(now.issuer?.fingerprint256, ca1.fingerprint256);
  t.equal(notAfter(now.leaf).getTime(), at(36).getTime());
  for (const day of [32, 48, 64]) {
    clock.set(at(day));
    t.same(await refreshRecording(source), ['serving-change'], `leaf renewed on day ${day}`);
  }
  t.equal(await probe.value('kube_admission_certificate_reloads_total'), 4);

  // Day 71: CA1 (expires day 100) is inside its 30-day window. CA2 joins the bundle, the leaf
  // signed by CA1 is still served.
  clock.set(at(71));
  t.same(await refreshRecording(source), ['ca-bundle-change'], 'only the bundle changes at rollover');
  now = describe(source.current());
  t.equal(now.bundle.length, 2, 'overlap bundle: old and new CA');
  t.equal(now.bundle[0]?.fingerprint256, ca1.fingerprint256, 'old CA first');
  const ca2 = now.bundle[1]!;
  t.not(ca2.fingerprint256, ca1.fingerprint256);
  t.equal(now.issuer?.fingerprint256, ca1.fingerprint256, 'served leaf still signed by the old CA');
  t.equal(api.get('hook-certs')?.data['ca.crt']?.trim(), ca2.toString().trim(), 'ca.crt is the new CA');

  // Not yet propagated (1 day): nothing moves.
  clock.set(at(71, 12 * 3600_000));
  t.same(await refreshRecording(source), []);
  t.equal(describe(source.current()).issuer?.fingerprint256, ca1.fingerprint256);

  // Propagated: the leaf moves to CA2; the bundle keeps both.
  clock.set(at(72, 60_000));
  t.same(await refreshRecording(source), ['serving-change']);
  now = describe(source.current());
  t.equal(now.issuer?.fingerprint256, ca2.fingerprint256, 'leaf now signed by the new CA');
  t.same(now.bundle.map((c) => c.fingerprint256), [ca1.fingerprint256, ca2.fingerprint256], 'old CA still published');
  t.equal(source.current().caNotAfter.getTime(), notAfter(ca2).getTime());

  clock.set(at(88));
  t.same(await refreshRecording(source), ['serving-change'], 'regular renewal under CA2');
  t.equal(describe(source.current()).bundle.length, 2);

  // Day 100 + 1 minute: CA1 has expired and is pruned; the leaf is untouched.
  clock.set(at(100, 60_000));
  t.same(await refreshRecording(source), ['ca-bundle-change'], 'pruning changes only the bundle');
  now = describe(source.current());
  t.same(now.bundle.map((c) => c.fingerprint256), [ca2.fingerprint256], 'expired CA pruned');
  t.equal(now.issuer?.fingerprint256, ca2.fingerprint256);
  t.equal(api.get('hook-certs')?.data['ca-bundle.crt'], source.current().caBundlePem, 'the Secret carries the published bundle');
});

t.test('a leaf never outlives its CA; at each step the served chain verifies against the bundle', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(T0);
  const { source } = generator(api, clock);
  await source.load(AbortSignal.timeout(20_000));
  const problems: string[] = [];
  const cas = new Set<string>();
  for (let day = 0; day <= 160; day += 4) {
    clock.set(at(day));
    await source.refresh(AbortSignal.timeout(20_000));
    const { leaf, issuer, bundle } = describe(source.current());
    bundle.forEach((ca) => cas.add(ca.fingerprint256));
    if (!issuer) problems.push(`day ${day}: served leaf does not chain to the bundle`);
    else if (notAfter(leaf) > notAfter(issuer)) problems.push(`day ${day}: leaf outlives its CA`);
    if (bundle.some((ca) => notAfter(ca) <= clock.now())) problems.push(`day ${day}: expired CA still published`);
    if (!(clock.now() < notAfter(leaf))) problems.push(`day ${day}: expired leaf served`);
  }
  t.same(problems, [], '160 days in 4-day steps: chain valid, leaf within its CA, no expired CA published');
  t.equal(cas.size, 3, 'rollovers on days 72 and 144 (CA lifetime 100 days, rolled 30 before)');
});

t.test('two replicas rolling the CA at the same moment end up with one new CA', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(T0);
  const [a, b] = [generator(api, clock), generator(api, clock)];
  await a.source.load(AbortSignal.timeout(20_000));
  await b.source.load(AbortSignal.timeout(20_000));
  clock.set(at(71));
  await Promise.all([a.source.refresh(AbortSignal.timeout(20_000)), b.source.refresh(AbortSignal.timeout(20_000))]);
  t.equal(a.source.current().caBundlePem, b.source.current().caBundlePem);
  t.equal(parseCertificates(a.source.current().caBundlePem).length, 2);
  t.equal(api.get('hook-certs')?.data['ca-bundle.crt'], a.source.current().caBundlePem);
});

t.test('the renewal timer runs the checks after start() and stops on stop()', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(T0);
  const { source } = generator(api, clock, 25);
  const before = await source.load(AbortSignal.timeout(20_000));
  const controller = new AbortController();
  source.start(controller.signal);
  clock.set(at(16));
  const [renewed] = await nextEvent<[ServingMaterial]>(source, 'serving-change');
  t.not(renewed.certPem, before.certPem);
  t.equal(renewed, source.current());
  await source.stop();
  const readsAfterStop = api.count('read');
  clock.set(at(40));
  await new Promise((resolve) => setTimeout(resolve, 100)); // four intervals: a live timer would read
  t.equal(api.count('read'), readsAfterStop, 'no checks after stop');

  source.start(controller.signal);
  controller.abort();
  await source.stop();
  t.pass('an aborted start winds down');
});
