import t from 'tap';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGeneratedMaterial } from '../src/tls/factory.js';
import { certificateSans } from '../src/tls/sans.js';
import { TestClock } from './support/tls/tls-clock.js';
import { fetchOnce, startHttpsServer } from './support/tls/tls-https.js';
import { DAY_MS, capturingLogger, metricsProbe, x509 } from './support/tls/tls-fixtures.js';

function localGenerator(certDir: string, clock: TestClock, extraSans: string[] = []) {
  const log = capturingLogger();
  const source = createGeneratedMaterial({
    serviceName: 'hook',
    namespace: 'ops',
    extraSans,
    local: true,
    certDir,
    caValidityDays: 5 * 365,
    leafValidityDays: 365,
    leafRenewBeforeDays: 30,
    caRenewBeforeDays: 90,
    now: clock.now,
    logger: log.logger,
    metrics: metricsProbe().metrics,
  });
  return { source, log };
}

const mode = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;

t.test('local mode generates into a new 0700 directory with 0600 keys, and the result serves real TLS', async (t) => {
  const parent = await mkdtemp(join(tmpdir(), 'kas-local-'));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  const dir = join(parent, 'nested', 'certs');
  const { source, log } = localGenerator(dir, new TestClock(new Date()));
  const material = await source.load(AbortSignal.timeout(20_000));
  t.equal(await mode(dir), 0o700, 'directory 0700');
  t.equal(await mode(join(dir, 'tls.key')), 0o600, 'tls.key 0600');
  t.equal(await mode(join(dir, 'ca.key')), 0o600, 'ca.key 0600');
  t.equal(await mode(join(dir, 'tls.crt')), 0o644);
  t.equal(await readFile(join(dir, 'tls.crt'), 'utf8'), material.certPem);
  t.equal(await readFile(join(dir, 'tls.key'), 'utf8'), material.keyPem);
  t.equal(await readFile(join(dir, 'ca.crt'), 'utf8'), material.caBundlePem);
  const sans = certificateSans(x509(material.certPem));
  t.ok(sans.dnsNames.includes('localhost') && sans.ipAddresses.includes('127.0.0.1'), 'localhost and 127.0.0.1 locally');
  t.notMatch(log.text(), /PRIVATE KEY/);

  const https = await startHttpsServer(material);
  t.teardown(() => https.close());
  for (const servername of ['hook.ops.svc', 'localhost']) {
    const reply = await fetchOnce({ port: https.port, ca: material.caBundlePem, servername });
    t.equal(reply.body, 'ok', `verified handshake as ${servername}`);
  }
});

t.test('a restart reuses valid material; changed SANs, expiry or a damaged key regenerate', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-local-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const clock = new TestClock(new Date());
  const first = await localGenerator(dir, clock).source.load(AbortSignal.timeout(20_000));
  const again = await localGenerator(dir, clock).source.load(AbortSignal.timeout(20_000));
  t.equal(again.certPem, first.certPem, 'reused');

  const widened = await localGenerator(dir, clock, ['hook.example.com']).source.load(AbortSignal.timeout(20_000));
  t.not(widened.certPem, first.certPem, 'new leaf for new SANs');
  t.equal(widened.caBundlePem, first.caBundlePem, 'same CA');
  t.ok(certificateSans(x509(widened.certPem)).dnsNames.includes('hook.example.com'));

  clock.advance(340 * DAY_MS);
  const renewed = await localGenerator(dir, clock, ['hook.example.com']).source.load(AbortSignal.timeout(20_000));
  t.not(renewed.certPem, widened.certPem, 'renewed near expiry');
  t.equal(renewed.caBundlePem, first.caBundlePem);

  await writeFile(join(dir, 'tls.key'), 'not a key', { mode: 0o600 });
  const repaired = await localGenerator(dir, clock, ['hook.example.com']).source.load(AbortSignal.timeout(20_000));
  t.not(repaired.certPem, renewed.certPem, 'damaged key: regenerated');
  t.equal(await mode(join(dir, 'tls.key')), 0o600);
});
