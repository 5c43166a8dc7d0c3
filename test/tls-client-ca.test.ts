import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClientCaSource } from '../src/tls/factory.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { eventually } from './support/tls/tls-https.js';
import { DAY_MS, capturingLogger, makeCa, makeLeaf, metricsProbe, nextEvent, x509 } from './support/tls/tls-fixtures.js';

const [caA, caB] = await Promise.all([makeCa(new Date(), 30, 'client CA A'), makeCa(new Date(), 60, 'client CA B')]);

async function setup(t: { teardown(fn: () => unknown): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'kas-client-ca-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const writer = new AtomicWriter(dir);
  const log = capturingLogger();
  const probe = metricsProbe();
  const source = createClientCaSource({ file: join(dir, 'ca.crt'), pollIntervalMs: 5_000, settleMs: 20, logger: log.logger, metrics: probe.metrics });
  return { dir, writer, log, probe, source };
}

t.test('the client CA file is loaded, followed through a ..data swap, and invalid versions are refused', async (t) => {
  const { writer, probe, source, log, dir } = await setup(t);
  await writer.write({ 'ca.crt': caA.certPem });
  t.equal(await source.load(AbortSignal.timeout(5_000)), caA.certPem);
  t.equal(
    await probe.value('kube_admission_certificate_not_after_seconds', { certificate: 'client-ca' }),
    Math.floor(new Date(x509(caA.certPem).validTo).getTime() / 1000),
  );
  source.start(AbortSignal.timeout(30_000));
  t.teardown(() => source.stop());

  const changed = nextEvent<[string]>(source, 'client-ca-change');
  await writer.write({ 'ca.crt': caA.certPem + caB.certPem });
  t.equal((await changed)[0], caA.certPem + caB.certPem);
  t.equal(source.current(), caA.certPem + caB.certPem);
  t.equal(
    await probe.value('kube_admission_certificate_not_after_seconds', { certificate: 'client-ca' }),
    Math.floor(new Date(x509(caA.certPem).validTo).getTime() / 1000),
    'the earliest expiry in the bundle',
  );

  const leaf = await makeLeaf(caA, { dnsNames: ['client'], ipAddresses: [] });
  await writer.write({ 'ca.crt': leaf.certPem });
  await eventually(async () => (await probe.value('kube_admission_certificate_reload_errors_total')) === 1, 'a rejected client CA');
  await writer.write({ 'ca.crt': 'garbage' });
  await eventually(async () => (await probe.value('kube_admission_certificate_reload_errors_total')) === 2, 'a second rejection');
  t.equal(source.current(), caA.certPem + caB.certPem, 'kept');
  const problems = log.lines.filter((line) => line['msg'] === 'new client CA rejected; keeping the current one').map((line) => line['problems']);
  t.match(problems, [[/ca\.crt: holds a certificate that is not a CA \(CN=client\)$/], [`${join(dir, 'ca.crt')}: no PEM certificate found`]]);
  t.equal(await probe.value('kube_admission_certificate_reloads_total'), 1);
});

t.test('an unusable client CA at start is a clear error', async (t) => {
  const { writer, source, dir } = await setup(t);
  await t.rejects(source.load(AbortSignal.timeout(5_000)), { message: `client CA is not usable: ${join(dir, 'ca.crt')}: missing or unreadable` });
  const old = await makeCa(new Date(Date.now() - 40 * DAY_MS), 10);
  await writer.write({ 'ca.crt': old.certPem });
  await t.rejects(source.load(AbortSignal.timeout(5_000)), { message: /every certificate in it has expired/ });
  t.throws(() => source.current(), { message: /before it was loaded/ });
});
