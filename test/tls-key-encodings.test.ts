/**
 * Files mode with the key encodings cert-manager writes: PKCS#1 `RSA PRIVATE KEY`, PKCS#8
 * `PRIVATE KEY` and SEC1 `EC PRIVATE KEY` (P-256), under RSA and EC CAs. The material is made by
 * test/support/tls/cert-builder.ts (node:crypto keys, @peculiar/x509 certificates), never by src/,
 * and served by the real webhook server over TLS 1.2 and 1.3.
 */
import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type SecureVersion } from 'node:tls';
import { createFileMaterial } from '../src/tls/factory.js';
import { servingSans } from '../src/tls/sans.js';
import type { ServingMaterial } from '../src/tls/types.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { PEM_LABEL, TEST_KEY_TYPES, type CertificateAndKey, type TestKeyType } from './support/tls/cert-builder.js';
import { podReview, request, serve, validating } from './support/server/server-harness.js';
import { createTestCa } from './support/tls/test-certs.js';
import { capturingLogger, makeCa, makeLeaf, metricsProbe, nextEvent } from './support/tls/tls-fixtures.js';

const SERVICE = { serviceName: 'kube-admission-server', namespace: 'default' };
const HOST = 'kube-admission-server.default.svc';
const sans = servingSans({ ...SERVICE, local: false, extraSans: ['localhost', '127.0.0.1'] });

async function mounted(t: { teardown(fn: () => unknown): void }): Promise<AtomicWriter> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-keys-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return new AtomicWriter(dir);
}

/** The certificate a TLS client of exactly this version, trusting only `caPem`, is shown. */
function handshake(port: number, caPem: string, version: SecureVersion): Promise<{ cert: X509Certificate; cipher: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: HOST, ca: caPem, minVersion: version, maxVersion: version, timeout: 5_000 }, () => {
      const cert = socket.getPeerX509Certificate();
      const cipher = socket.getCipher().standardName;
      socket.end();
      if (cert) resolve({ cert, cipher });
      else reject(new Error('no peer certificate'));
    });
    socket.on('timeout', () => socket.destroy(new Error(`no ${version} handshake within 5 s`)));
    socket.on('error', reject);
  });
}

// serve() wants a CA of its own for when no serving material is given; here it always is.
const harnessCa = createTestCa();
// Only ca.crt is mounted, so the CA's key encoding plays no part; its algorithm does (the signature).
const rsaCa = await makeCa(new Date(), 365, 'RSA CA', { key: 'rsa-pkcs8' });
const ecCa = await makeCa(new Date(), 365, 'EC CA', { key: 'ec-pkcs8' });
const CASES: readonly [string, CertificateAndKey, TestKeyType][] = [
  ...TEST_KEY_TYPES.map((key): [string, CertificateAndKey, TestKeyType] => ['RSA', rsaCa, key]),
  ['EC', ecCa, 'ec-sec1'],
  ['EC', ecCa, 'rsa-pkcs1'],
];

for (const [caName, ca, leafKey] of CASES) {
  t.test(`a ${leafKey} leaf key under an ${caName} CA is loaded, matched to its certificate and served`, async (t) => {
    const leaf = await makeLeaf(ca, sans, new Date(), 90, { key: leafKey });
    t.match(leaf.keyPem, new RegExp(`^-----BEGIN ${PEM_LABEL[leafKey]}-----\n`), `the key is written as ${PEM_LABEL[leafKey]}`);
    const writer = await mounted(t);
    await writer.write({ 'tls.crt': leaf.certPem, 'tls.key': leaf.keyPem, 'ca.crt': ca.certPem });
    const source = createFileMaterial({ certDir: writer.targetDir, ...SERVICE, pollIntervalMs: 60_000, logger: capturingLogger().logger, metrics: metricsProbe().metrics });
    const material = await source.load(AbortSignal.timeout(5_000));
    t.equal(material.keyPem, leaf.keyPem, 'the key is served as written');

    const served = await serve([validating('check', () => ({ allowed: true }))], { ca: harnessCa, serving: material });
    t.teardown(() => served.server.close(1_000));
    const expected = new X509Certificate(leaf.certPem).fingerprint256;
    for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
      const { cert, cipher } = await handshake(served.port, ca.certPem, version);
      t.equal(cert.fingerprint256, expected, `${version}: the mounted certificate (${cipher})`);
    }
    const answer = await request(served.port, '/validate/check', podReview(), { ca: ca.certPem });
    t.equal(answer.status, 200, 'a review is answered over it');
  });
}

t.test('a key that does not belong to the certificate is refused, whatever the encodings', async (t) => {
  const ca = ecCa;
  const [ecLeaf, otherEc, rsaLeaf] = await Promise.all([
    makeLeaf(ca, sans, new Date(), 90, { key: 'ec-sec1' }),
    makeLeaf(ca, sans, new Date(), 90, { key: 'ec-pkcs8' }),
    makeLeaf(ca, sans, new Date(), 90, { key: 'rsa-pkcs1' }),
  ]);
  const writer = await mounted(t);
  for (const [cert, key, what] of [
    [ecLeaf, otherEc, 'another EC key'],
    [ecLeaf, rsaLeaf, 'an RSA key for an EC certificate'],
    [rsaLeaf, ecLeaf, 'an EC key for an RSA certificate'],
  ] as const) {
    await writer.write({ 'tls.crt': cert.certPem, 'tls.key': key.keyPem, 'ca.crt': ca.certPem });
    const source = createFileMaterial({ certDir: writer.targetDir, ...SERVICE, pollIntervalMs: 60_000, logger: capturingLogger().logger, metrics: metricsProbe().metrics });
    await t.rejects(source.load(AbortSignal.timeout(5_000)), { message: /tls\.key: does not match the certificate in/ }, what);
  }
});

t.test('a rotation from an RSA PKCS#1 key to an EC key is followed without a restart', async (t) => {
  const ca = rsaCa;
  const [rsa, ec] = await Promise.all([makeLeaf(ca, sans, new Date(), 90, { key: 'rsa-pkcs1' }), makeLeaf(ca, sans, new Date(), 90, { key: 'ec-sec1' })]);
  const writer = await mounted(t);
  await writer.write({ 'tls.crt': rsa.certPem, 'tls.key': rsa.keyPem, 'ca.crt': ca.certPem });
  const source = createFileMaterial({ certDir: writer.targetDir, ...SERVICE, pollIntervalMs: 60_000, settleMs: 20, logger: capturingLogger().logger, metrics: metricsProbe().metrics });
  const served = await serve([validating('check', () => ({ allowed: true }))], { ca: harnessCa, serving: await source.load(AbortSignal.timeout(5_000)) });
  t.teardown(() => served.server.close(1_000));
  source.on('serving-change', (next) => served.server.updateCertificate(next));
  source.start(AbortSignal.timeout(30_000));
  t.teardown(() => source.stop());
  t.equal((await handshake(served.port, ca.certPem, 'TLSv1.2')).cert.publicKey.asymmetricKeyType, 'rsa');
  const changed = nextEvent<[ServingMaterial]>(source, 'serving-change');
  await writer.write({ 'tls.crt': ec.certPem, 'tls.key': ec.keyPem, 'ca.crt': ca.certPem });
  await changed;
  for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
    const { cert } = await handshake(served.port, ca.certPem, version);
    t.equal(cert.fingerprint256, new X509Certificate(ec.certPem).fingerprint256, `${version}: the EC certificate`);
  }
});
