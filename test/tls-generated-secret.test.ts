import t, { type Test } from 'tap';
import { createGeneratedMaterial, type GeneratedMaterialConfig } from '../src/tls/factory.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, SecretApiError, TLS_SECRET_TYPE } from '../src/tls/secret-api.js';
import { chainRoot } from '../src/tls/validate.js';
import { parseCertificates } from '../src/tls/pem.js';
import type { ServingMaterial } from '../src/tls/types.js';
import { MemorySecretApi } from './support/kube/memory-secret-api.js';
import { TestClock } from './support/tls/tls-clock.js';
import { DAY_MS, capturingLogger, makeCa, metricsProbe } from './support/tls/tls-fixtures.js';

const SECRET = 'hook-certs';
const START = '2026-02-01T00:00:00Z';

function generator(api: MemorySecretApi, clock: TestClock, overrides: Partial<GeneratedMaterialConfig> = {}) {
  const log = capturingLogger();
  const probe = metricsProbe();
  const source = createGeneratedMaterial({
    serviceName: 'hook',
    namespace: 'ops',
    extraSans: [],
    local: false,
    certDir: '/nonexistent',
    secretApi: api,
    caValidityDays: 5 * 365,
    leafValidityDays: 365,
    leafRenewBeforeDays: 30,
    caRenewBeforeDays: 90,
    now: clock.now,
    logger: log.logger,
    metrics: probe.metrics,
    ...overrides,
  });
  return { source, log, probe };
}

function assertChains(t: Test, material: ServingMaterial): void {
  const [leaf, ...rest] = parseCertificates(material.certPem);
  t.ok(leaf && chainRoot(leaf, rest, parseCertificates(material.caBundlePem)), 'served certificate chains to the bundle');
}

t.test('first start creates the managed Secret; a restart adopts it without writing', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(START);
  const first = generator(api, clock);
  const material = await first.source.load(AbortSignal.timeout(20_000));
  const secret = api.get(SECRET);
  t.ok(secret, 'Secret created');
  t.equal(secret?.type, TLS_SECRET_TYPE);
  t.same(secret?.labels, { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE });
  t.same(Object.keys(secret?.data ?? {}).sort(), ['ca-bundle.crt', 'ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
  t.equal(secret?.data['tls.crt'], material.certPem);
  t.equal(secret?.data['ca-bundle.crt'], secret?.data['ca.crt'], 'bundle is the one CA');
  t.equal(material.caBundlePem, secret?.data['ca.crt']);
  assertChains(t, material);
  t.equal(material.certNotAfter.getTime(), clock.now().getTime() + 365 * DAY_MS);
  t.equal(await first.probe.value('kube_admission_certificate_not_after_seconds', { certificate: 'serving' }), material.certNotAfter.getTime() / 1000);
  t.equal(await first.probe.value('kube_admission_certificate_not_after_seconds', { certificate: 'ca' }), material.caNotAfter.getTime() / 1000);
  t.notMatch(first.log.text(), /PRIVATE KEY/, 'no key material in the logs');

  const restarted = generator(api, clock.advance(3 * DAY_MS) && clock);
  const again = await restarted.source.load(AbortSignal.timeout(20_000));
  t.equal(again.certPem, material.certPem);
  t.equal(again.caBundlePem, material.caBundlePem);
  t.equal(api.count('create'), 1);
  t.equal(api.count('replace'), 0, 'valid material is not rewritten');
});

t.test('two generators starting at once against an empty store end up with one CA and one leaf', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(START);
  const [a, b] = [generator(api, clock), generator(api, clock)];
  const [ma, mb] = await Promise.all([a.source.load(AbortSignal.timeout(20_000)), b.source.load(AbortSignal.timeout(20_000))]);
  t.equal(ma.caBundlePem, mb.caBundlePem, 'one CA');
  t.equal(ma.certPem, mb.certPem, 'one leaf');
  t.equal(api.get(SECRET)?.data['ca.crt'], ma.caBundlePem);
  t.equal(api.count('create', 'created'), 1);
  t.equal(api.count('create', 'AlreadyExists'), 1, 'the loser adopted the winner');
});

t.test('concurrent renewals: updates carry resourceVersion, the 409 loser re-reads and adopts', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(START);
  const [a, b] = [generator(api, clock), generator(api, clock)];
  await a.source.load(AbortSignal.timeout(20_000));
  const before = await b.source.load(AbortSignal.timeout(20_000));
  clock.advance(340 * DAY_MS); // inside the 30-day renew window of the one-year leaf
  const changes: string[] = [];
  b.source.on('serving-change', () => changes.push('b serving'));
  b.source.on('ca-bundle-change', () => changes.push('b bundle'));
  await Promise.all([a.source.refresh(AbortSignal.timeout(20_000)), b.source.refresh(AbortSignal.timeout(20_000))]);
  t.not(a.source.current().certPem, before.certPem, 'renewed');
  t.equal(a.source.current().certPem, b.source.current().certPem, 'both serve the same new leaf');
  t.equal(api.get(SECRET)?.data['tls.crt'], a.source.current().certPem);
  t.equal(api.count('replace', 'replaced'), 1);
  t.equal(api.count('replace', 'Conflict'), 1);
  t.same(changes, ['b serving'], 'the CA did not change');
  t.equal(await b.probe.value('kube_admission_certificate_reloads_total'), 1);
});

t.test("a Secret without the managed-by label is the user's: never overwritten", async (t) => {
  const api = new MemorySecretApi();
  const ca = await makeCa();
  const user = api.put({ name: SECRET, type: TLS_SECRET_TYPE, labels: { team: 'x' }, data: { 'tls.crt': ca.certPem } });
  const { source } = generator(api, new TestClock(START));
  await t.rejects(source.load(AbortSignal.timeout(20_000)), {
    message: /Secret ops\/hook-certs exists but is not labelled app\.kubernetes\.io\/managed-by=kube-admission-server/,
  });
  t.same(api.get(SECRET), user, 'untouched');
  t.equal(api.count('replace') + api.count('create'), 0);
});

t.test('a managed Secret of the wrong type is a clear error, not replaced', async (t) => {
  const api = new MemorySecretApi();
  const stored = api.put({ name: SECRET, type: 'Opaque', labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE }, data: {} });
  const { source } = generator(api, new TestClock(START));
  await t.rejects(source.load(AbortSignal.timeout(20_000)), { message: /Secret ops\/hook-certs has type Opaque, expected kubernetes\.io\/tls/ });
  t.same(api.get(SECRET), stored);
});

t.test('a deleted Secret is recreated with the material in service; damaged material is repaired', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(START);
  const { source, log } = generator(api, clock);
  const material = await source.load(AbortSignal.timeout(20_000));
  let events = 0;
  source.on('serving-change', () => events++);
  source.on('ca-bundle-change', () => events++);
  api.delete(SECRET);
  await source.refresh(AbortSignal.timeout(20_000));
  t.equal(api.get(SECRET)?.data['tls.crt'], material.certPem, 'recreated with the same leaf');
  t.equal(api.get(SECRET)?.data['ca.crt'], material.caBundlePem, 'and the same CA');
  t.equal(events, 0, 'nothing to announce');
  t.ok(log.lines.some((line) => line['msg'] === 'certificate material recreated'));

  const damaged = api.get(SECRET)!;
  delete damaged.data['tls.key'];
  await api.replace(damaged, AbortSignal.timeout(1000));
  const serving = new Promise<ServingMaterial>((resolve) => source.once('serving-change', resolve));
  await source.refresh(AbortSignal.timeout(20_000));
  const repaired = await serving;
  t.not(repaired.certPem, material.certPem, 'a new leaf for the missing key');
  t.equal(repaired.caBundlePem, material.caBundlePem, 'same CA');
  t.equal(api.get(SECRET)?.data['tls.key'], repaired.keyPem);
});

t.test('a renewal keeps the owners the leader gave the Secret (a PUT without them would drop them)', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(START);
  const { source } = generator(api, clock);
  const material = await source.load(AbortSignal.timeout(20_000));
  const owners = [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'hook', uid: 'uid-role' },
    { apiVersion: 'apps/v1', kind: 'Deployment', name: 'hook', uid: 'uid-deployment' },
  ];
  await api.replace({ ...api.get(SECRET)!, ownerReferences: owners }, AbortSignal.timeout(1000));
  await source.refresh(AbortSignal.timeout(20_000));
  clock.advance(340 * DAY_MS);
  const serving = new Promise<ServingMaterial>((resolve) => source.once('serving-change', resolve));
  await source.refresh(AbortSignal.timeout(20_000));
  t.not((await serving).certPem, material.certPem, 'the leaf was renewed');
  t.equal(api.get(SECRET)?.data['tls.crt'], source.current().certPem, 'and written to the Secret');
  t.same(api.get(SECRET)?.ownerReferences, owners, 'with its owners');
});

t.test('transient API errors are retried with backoff; exhausted retries fail the check and keep the material', async (t) => {
  const api = new MemorySecretApi();
  const clock = new TestClock(START);
  api.injectFault('read', new SecretApiError('etcdserver: request timed out', 'Other', 500));
  const { source, probe } = generator(api, clock, { checkIntervalMs: 10 });
  const material = await source.load(AbortSignal.timeout(20_000));
  t.equal(api.count('read', 'injected Other'), 1);
  for (let i = 0; i < 6; i++) api.injectFault('read', new SecretApiError('apiserver down', 'Other', 503));
  const controller = new AbortController();
  source.start(controller.signal);
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error('no reload error counted')), 15_000);
    const poll = setInterval(async () => {
      if ((await probe.value('kube_admission_certificate_reload_errors_total')) === 1) {
        clearInterval(poll);
        clearTimeout(deadline);
        resolve();
      }
    }, 20);
  });
  await source.stop();
  t.equal(api.count('read', 'injected Other'), 7);
  // A later check (every 10 ms here) may re-adopt the same material from the Secret: compare content.
  t.equal(source.current().certPem, material.certPem, 'serving certificate kept');
  t.equal(source.current().caBundlePem, material.caBundlePem, 'CA bundle kept');
});

t.test('lifetimes that would thrash are refused up front', async (t) => {
  t.throws(() => generator(new MemorySecretApi(), new TestClock(START), { caRenewBeforeDays: 20 }), {
    message: /CA renew-before \(20 days\) must exceed leaf renew-before \(30 days\)/,
  });
  t.throws(() => generator(new MemorySecretApi(), new TestClock(START), { leafRenewBeforeDays: 400 }), { message: /leaf renew-before/ });
  t.throws(() => createGeneratedMaterial({ ...baseConfig(), secretApi: undefined }), { message: /needs a SecretApi/ });
});

function baseConfig(): GeneratedMaterialConfig {
  const probe = metricsProbe();
  return {
    serviceName: 'hook',
    namespace: 'ops',
    extraSans: [],
    local: false,
    certDir: '/nonexistent',
    caValidityDays: 365,
    leafValidityDays: 90,
    leafRenewBeforeDays: 30,
    caRenewBeforeDays: 60,
    logger: capturingLogger().logger,
    metrics: probe.metrics,
  };
}
