import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { createGeneratedMaterial, type GeneratedMaterialConfig } from '../src/tls/factory.js';
import type { ServingMaterial } from '../src/tls/types.js';
import { MemorySecretApi } from './support/kube/memory-secret-api.js';
import { TestClock } from './support/tls/tls-clock.js';
import { DAY_MS, capturingLogger, metricsProbe, nextEvent } from './support/tls/tls-fixtures.js';

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (days: number, extraMs = 0): Date => new Date(T0.getTime() + days * DAY_MS + extraMs);

// The oracle is node's X509Certificate alone: certificates are split and parsed here, and a CA
// issued a certificate when node says so (names and key identifiers by checkIssued, the signature
// by verify with the CA's public key); nothing of src/tls judges its own output.
function certificates(pem: string | undefined): X509Certificate[] {
  return (pem?.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((block) => new X509Certificate(block));
}
const issued = (cert: X509Certificate, ca: X509Certificate): boolean => cert.checkIssued(ca) && cert.verify(ca.publicKey);
const validAt = (cert: X509Certificate, now: Date): boolean => new Date(cert.validFrom) <= now && now < new Date(cert.validTo);
const notAfterOf = (cert: X509Certificate): number => new Date(cert.validTo).getTime();

function describe(material: ServingMaterial): { bundle: X509Certificate[]; leaf: X509Certificate; issuer: X509Certificate | undefined } {
  const bundle = certificates(material.caBundlePem);
  const [leaf] = certificates(material.certPem);
  return { bundle, leaf: leaf!, issuer: bundle.find((ca) => issued(leaf!, ca)) };
}

/** Short lifetimes so that a rollover fits in a few clock steps. */
function generator(api: MemorySecretApi, clock: TestClock, extra: Partial<GeneratedMaterialConfig> = {}) {
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
    checkIntervalMs: 600_000,
    now: clock.now,
    logger: log.logger,
    metrics: probe.metrics,
    ...extra,
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

/** A stand-in for the live configurations: the CAs they trust, set by the test. */
class LiveBundle {
  trusted = new Set<string>();
  reads = 0;
  failing = false;
  readonly reader = async (): Promise<ReadonlySet<string>> => {
    this.reads++;
    if (this.failing) throw new Error('the API did not answer');
    return new Set(this.trusted);
  };
}

/** A generator whose live configurations trust its first CA, loaded. */
async function liveGenerator() {
  const clock = new TestClock(T0);
  const live = new LiveBundle();
  const { source, log } = generator(new MemorySecretApi(), clock, { trustedCas: live.reader });
  const ca1 = describe(await source.load(AbortSignal.timeout(20_000))).bundle[0]!;
  live.trusted.add(ca1.fingerprint256);
  return { clock, live, source, log, ca1 };
}

t.test('leaf renewal and CA rollover with overlap, driven by the clock (no live confirmation: after the propagation time)', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(T0);
  const { source, probe } = generator(api, clock);
  const initial = describe(await source.load(AbortSignal.timeout(20_000)));
  const ca1 = initial.bundle[0]!;
  t.equal(initial.bundle.length, 1);
  t.ok(ca1.ca && issued(ca1, ca1), 'a self-signed CA');
  t.equal(initial.issuer?.fingerprint256, ca1.fingerprint256, 'the leaf is signed by it');
  t.ok(validAt(initial.leaf, clock.now()) && initial.leaf.checkHost('hook.ops.svc', { subject: 'never' }) === 'hook.ops.svc');

  // Leaf renewal: 5 days before its 20-day expiry, same CA, serving change only.
  clock.set(at(14));
  t.same(await refreshRecording(source), [], 'nothing due on day 14');
  clock.set(at(16));
  t.same(await refreshRecording(source), ['serving-change'], 'leaf renewed on day 16');
  let now = describe(source.current());
  t.equal(now.issuer?.fingerprint256, ca1.fingerprint256);
  t.equal(notAfterOf(now.leaf), at(36).getTime());
  for (const day of [32, 48, 64]) {
    clock.set(at(day));
    t.same(await refreshRecording(source), ['serving-change'], `leaf renewed on day ${day}`);
  }
  t.equal(await probe.value('kube_admission_certificate_reloads_total'), 4);

  // Day 71: CA1 (expires day 100) is inside its 30-day window. CA2 joins the bundle as the next
  // CA; the leaf signed by CA1 is still served, and CA1 stays the CA in ca.crt.
  clock.set(at(71));
  t.same(await refreshRecording(source), ['ca-bundle-change'], 'only the bundle changes at rollover');
  now = describe(source.current());
  t.equal(now.bundle.length, 2, 'overlap bundle: old and new CA');
  t.equal(now.bundle[0]?.fingerprint256, ca1.fingerprint256, 'old CA first');
  const ca2 = now.bundle[1]!;
  t.not(ca2.fingerprint256, ca1.fingerprint256);
  t.ok(ca2.ca && issued(ca2, ca2) && validAt(ca2, clock.now()), 'the next CA is a valid self-signed CA');
  t.equal(now.issuer?.fingerprint256, ca1.fingerprint256, 'served leaf still signed by the old CA');
  const secret = (): Record<string, string> => api.get('hook-certs')?.data ?? {};
  t.equal(certificates(secret()['ca.crt'])[0]?.fingerprint256, ca1.fingerprint256, 'ca.crt is still the CA that signs the leaf');
  t.equal(certificates(secret()['next-ca.crt'])[0]?.fingerprint256, ca2.fingerprint256, 'next-ca.crt holds the new CA');

  // Not yet propagated (half a day): nothing moves.
  clock.set(at(71, 12 * 3600_000));
  t.same(await refreshRecording(source), []);
  t.equal(describe(source.current()).issuer?.fingerprint256, ca1.fingerprint256);

  // Propagated: the leaf moves to CA2; the bundle keeps both.
  clock.set(at(72, 60_000));
  t.same(await refreshRecording(source), ['serving-change']);
  now = describe(source.current());
  t.equal(now.issuer?.fingerprint256, ca2.fingerprint256, 'leaf now signed by the new CA');
  t.same(now.bundle.map((c) => c.fingerprint256), [ca1.fingerprint256, ca2.fingerprint256], 'old CA still published');
  t.equal(source.current().caNotAfter.getTime(), notAfterOf(ca2));
  t.equal(certificates(secret()['ca.crt'])[0]?.fingerprint256, ca2.fingerprint256, 'ca.crt is the new CA');
  t.equal(secret()['next-ca.crt'], undefined, 'no next CA any more');

  clock.set(at(88));
  t.same(await refreshRecording(source), ['serving-change'], 'regular renewal under CA2');
  t.equal(describe(source.current()).bundle.length, 2);

  // Day 100 + 1 minute: CA1 has expired and is pruned; the leaf is untouched.
  clock.set(at(100, 60_000));
  t.same(await refreshRecording(source), ['ca-bundle-change'], 'pruning changes only the bundle');
  now = describe(source.current());
  t.same(now.bundle.map((c) => c.fingerprint256), [ca2.fingerprint256], 'expired CA pruned');
  t.equal(now.issuer?.fingerprint256, ca2.fingerprint256);
  t.equal(secret()['ca-bundle.crt'], source.current().caBundlePem, 'the Secret carries the published bundle');
});

t.test('with live confirmation, the leaf moves to a new CA only once the live configurations trust it, and is renewed by the old CA until then', async (t) => {
  const { clock, live, source, log, ca1 } = await liveGenerator();
  t.equal(live.reads, 0, 'nothing to confirm, nothing read');

  clock.set(at(64));
  await source.refresh(AbortSignal.timeout(20_000));
  clock.set(at(71));
  t.same(await refreshRecording(source), ['ca-bundle-change'], 'the next CA is published');
  const ca2 = describe(source.current()).bundle[1]!;

  // Days past any propagation time, the configurations still show only CA1 (say, a PUT that hangs).
  for (const day of [72, 74, 78]) {
    clock.set(at(day));
    t.same(await refreshRecording(source), [], `day ${day}: no move while unconfirmed`);
    t.equal(describe(source.current()).issuer?.fingerprint256, ca1.fingerprint256);
  }
  t.ok(live.reads >= 3, 'each check asked the live configurations');

  // The leaf from day 64 is due on day 79: renewed, by the old CA.
  clock.set(at(80));
  t.same(await refreshRecording(source), ['serving-change'], 'the due leaf is renewed');
  let now = describe(source.current());
  t.equal(now.issuer?.fingerprint256, ca1.fingerprint256, 'by the old CA, the one callers trust');
  t.ok(validAt(now.leaf, clock.now()));
  t.equal(notAfterOf(now.leaf), at(100).getTime(), 'capped at the old CA NotAfter');

  // Reading fails: still no move, and it says why.
  live.failing = true;
  clock.set(at(81));
  t.same(await refreshRecording(source), []);
  t.ok(log.lines.some((line) => line['msg'] === 'could not read the CAs of the live webhook configurations; the serving certificate stays with its CA'));

  // The PUT landed and was read back: the next check moves the leaf.
  live.failing = false;
  live.trusted.add(ca2.fingerprint256);
  t.same(await refreshRecording(source), ['serving-change'], 'moved once confirmed');
  now = describe(source.current());
  t.equal(now.issuer?.fingerprint256, ca2.fingerprint256, 'leaf now signed by the new CA');
  t.same(now.bundle.map((c) => c.fingerprint256), [ca1.fingerprint256, ca2.fingerprint256], 'the old CA is still published');
});

t.test('a rollover that is never confirmed moves when the old CA can no longer sign a lasting leaf', async (t) => {
  const { clock, source, log, ca1 } = await liveGenerator();
  for (const day of [16, 32, 48, 64, 71, 80, 90]) {
    clock.set(at(day));
    await source.refresh(AbortSignal.timeout(20_000));
  }
  t.equal(describe(source.current()).issuer?.fingerprint256, ca1.fingerprint256, 'day 90: still the old CA');
  clock.set(at(95, 60_000));
  t.same(await refreshRecording(source), ['serving-change'], 'day 95: CA1 expires in 5 days, the leaf renew-before');
  const now = describe(source.current());
  t.not(now.issuer?.fingerprint256, ca1.fingerprint256, 'moved to the next CA');
  t.ok(now.issuer && validAt(now.issuer, clock.now()) && validAt(now.leaf, clock.now()));
  t.ok(log.lines.some((line) => JSON.stringify(line['reasons'] ?? []).includes('never confirmed')), 'and the log says why');
});

t.test('while a next CA waits, the renewal loop polls the live configurations and moves within a poll of the confirmation', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(T0);
  const live = new LiveBundle();
  // The check interval is far longer than the test: only the confirmation poll can bring the move.
  const { source } = generator(api, clock, { trustedCas: live.reader, checkIntervalMs: 10 * 60_000, caConfirmPollMs: 20 });
  await source.load(AbortSignal.timeout(20_000));
  clock.set(at(71));
  await source.refresh(AbortSignal.timeout(20_000));
  const ca2 = describe(source.current()).bundle[1]!;
  source.start(AbortSignal.timeout(60_000));
  t.teardown(() => source.stop());
  const readsBefore = live.reads;
  const moved = nextEvent<[ServingMaterial]>(source, 'serving-change', 10_000);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.ok(live.reads > readsBefore + 2, 'polled while waiting');
  live.trusted.add(ca2.fingerprint256);
  const [serving] = await moved;
  t.equal(describe(serving).issuer?.fingerprint256, ca2.fingerprint256);
  await source.stop();
  const readsAfterStop = live.reads;
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(live.reads, readsAfterStop, 'no polling after stop');
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
    else if (notAfterOf(leaf) > notAfterOf(issuer)) problems.push(`day ${day}: leaf outlives its CA`);
    if (bundle.some((ca) => !validAt(ca, clock.now()))) problems.push(`day ${day}: a CA outside its validity is published`);
    if (!validAt(leaf, clock.now())) problems.push(`day ${day}: a leaf outside its validity is served`);
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
  t.equal(certificates(a.source.current().caBundlePem).length, 2);
  t.equal(api.get('hook-certs')?.data['ca-bundle.crt'], a.source.current().caBundlePem);
});

t.test('the renewal timer runs the checks after start() and stops on stop()', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(T0);
  const { source } = generator(api, clock, { checkIntervalMs: 25 });
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
