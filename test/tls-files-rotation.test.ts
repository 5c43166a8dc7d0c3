import t from 'tap';
import { Agent } from 'node:https';
import { mkdtemp, rm, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileMaterial } from '../src/tls/factory.js';
import { servingSans } from '../src/tls/sans.js';
import type { ServingMaterial } from '../src/tls/types.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { eventually, fetchOnce, startHttpsServer } from './support/tls/tls-https.js';
import { DAY_MS, capturingLogger, makeCa, makeLeaf, metricsProbe, nextEvent, x509 } from './support/tls/tls-fixtures.js';

const SERVICE = { serviceName: 'hook', namespace: 'ops' };
const HOST = 'hook.ops.svc';
const sans = servingSans({ ...SERVICE, local: false, extraSans: [] });
const ca1 = await makeCa();
const [leaf1, leaf2, leaf3] = await Promise.all([makeLeaf(ca1, sans), makeLeaf(ca1, sans), makeLeaf(ca1, sans)]);
const ca2 = await makeCa(new Date(), 365, 'second CA');
const leaf4 = await makeLeaf(ca2, sans);

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-files-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function fileSource(certDir: string, pollIntervalMs = 5_000) {
  const log = capturingLogger();
  const probe = metricsProbe();
  const source = createFileMaterial({ certDir, ...SERVICE, pollIntervalMs, settleMs: 30, logger: log.logger, metrics: probe.metrics });
  return { source, log, probe };
}

const fp = (pem: string): string => x509(pem).fingerprint256;

t.test('kubelet-style rotation swaps the served certificate; open keep-alive connections keep working', async (t) => {
  const dir = await tempDir(t);
  const writer = new AtomicWriter(dir);
  await writer.write({ 'tls.crt': leaf1.certPem, 'tls.key': leaf1.keyPem, 'ca.crt': ca1.certPem });
  const { source, log, probe } = fileSource(dir);
  const material = await source.load(AbortSignal.timeout(5_000));
  const https = await startHttpsServer(material);
  t.teardown(() => https.close());
  source.on('serving-change', (next) => https.server.setSecureContext({ key: next.keyPem, cert: next.certPem }));
  const controller = new AbortController();
  source.start(controller.signal);
  t.teardown(() => source.stop());

  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => keepAlive.destroy());
  const first = await fetchOnce({ port: https.port, ca: ca1.certPem, servername: HOST, agent: keepAlive });
  t.equal(first.fingerprint, fp(leaf1.certPem));

  const changed = nextEvent<[ServingMaterial]>(source, 'serving-change');
  await writer.write({ 'tls.crt': leaf2.certPem, 'tls.key': leaf2.keyPem, 'ca.crt': ca1.certPem });
  const [next] = await changed;
  t.equal(next.certPem, leaf2.certPem);
  t.equal(source.current(), next);

  const fresh = await fetchOnce({ port: https.port, ca: ca1.certPem, servername: HOST });
  t.equal(fresh.fingerprint, fp(leaf2.certPem), 'a new connection sees the new certificate');
  const reused = await fetchOnce({ port: https.port, ca: ca1.certPem, servername: HOST, agent: keepAlive });
  t.ok(reused.reusedSocket, 'the keep-alive connection was reused');
  t.equal(reused.status, 200);
  t.equal(reused.socket, first.socket, 'on the very connection that was set up with the old certificate');
  t.equal(await probe.value('kube_admission_certificate_reloads_total'), 1);
  t.equal(await probe.value('kube_admission_certificate_not_after_seconds', { certificate: 'serving' }), Math.floor(next.certNotAfter.getTime() / 1000));
  t.notMatch(log.text(), /PRIVATE KEY/);
});

t.test('invalid new material is rejected: the old stays, the reason is logged, an error is counted', async (t) => {
  const dir = await tempDir(t);
  const writer = new AtomicWriter(dir);
  await writer.write({ 'tls.crt': leaf1.certPem, 'tls.key': leaf1.keyPem, 'ca.crt': ca1.certPem });
  const { source, log, probe } = fileSource(dir);
  const material = await source.load(AbortSignal.timeout(5_000));
  const https = await startHttpsServer(material);
  t.teardown(() => https.close());
  let swaps = 0;
  source.on('serving-change', (next) => {
    swaps++;
    https.server.setSecureContext({ key: next.keyPem, cert: next.certPem });
  });
  source.start(AbortSignal.timeout(30_000));
  t.teardown(() => source.stop());

  await writer.write({ 'tls.crt': leaf3.certPem, 'tls.key': leaf2.keyPem, 'ca.crt': ca1.certPem });
  await eventually(async () => (await probe.value('kube_admission_certificate_reload_errors_total')) === 1, 'a reload error');
  t.equal(swaps, 0);
  t.equal(source.current(), material, 'old material kept');
  const rejected = log.lines.find((line) => line['msg'] === 'new TLS material rejected; keeping the current material');
  t.same(rejected?.['problems'], [`${join(dir, 'tls.key')}: does not match the certificate in ${join(dir, 'tls.crt')}`]);
  t.equal((await fetchOnce({ port: https.port, ca: ca1.certPem, servername: HOST })).fingerprint, fp(leaf1.certPem), 'still served');

  // A certificate for another service is rejected as well.
  const stranger = await makeLeaf(ca1, { dnsNames: ['other.ops.svc'], ipAddresses: [] });
  await writer.write({ 'tls.crt': stranger.certPem, 'tls.key': stranger.keyPem, 'ca.crt': ca1.certPem });
  await eventually(async () => (await probe.value('kube_admission_certificate_reload_errors_total')) === 2, 'a second reload error');

  // Fixed material is taken up afterwards.
  const recovered = nextEvent<[ServingMaterial]>(source, 'serving-change');
  await writer.write({ 'tls.crt': leaf3.certPem, 'tls.key': leaf3.keyPem, 'ca.crt': ca1.certPem });
  await recovered;
  t.equal((await fetchOnce({ port: https.port, ca: ca1.certPem, servername: HOST })).fingerprint, fp(leaf3.certPem));
  t.notMatch(log.text(), /PRIVATE KEY/);
});

t.test('a CA rotation announces the new bundle before the serving change', async (t) => {
  const dir = await tempDir(t);
  const writer = new AtomicWriter(dir);
  await writer.write({ 'tls.crt': leaf1.certPem, 'tls.key': leaf1.keyPem, 'ca.crt': ca1.certPem });
  const { source } = fileSource(dir);
  const material = await source.load(AbortSignal.timeout(5_000));
  const https = await startHttpsServer(material);
  t.teardown(() => https.close());
  const events: string[] = [];
  source.on('ca-bundle-change', (bundle) => events.push(`bundle:${fp(bundle)}`));
  source.on('serving-change', (next) => {
    events.push(`serving:${fp(next.certPem)}`);
    https.server.setSecureContext({ key: next.keyPem, cert: next.certPem });
  });
  source.start(AbortSignal.timeout(30_000));
  t.teardown(() => source.stop());

  // cert-manager style: the Secret changes CA and leaf at once; the bundle carries both CAs.
  const changed = nextEvent(source, 'serving-change');
  await writer.write({ 'tls.crt': leaf4.certPem, 'tls.key': leaf4.keyPem, 'ca.crt': ca1.certPem + ca2.certPem });
  await changed;
  t.same(events, [`bundle:${fp(ca1.certPem)}`, `serving:${fp(leaf4.certPem)}`]);
  t.equal(source.current().caBundlePem, ca1.certPem + ca2.certPem);
  t.equal(source.current().caNotAfter.getTime(), new Date(x509(ca2.certPem).validTo).getTime(), 'caNotAfter is the issuing CA');
  t.equal((await fetchOnce({ port: https.port, ca: ca2.certPem, servername: HOST })).fingerprint, fp(leaf4.certPem));

  // Only ca.crt changes (old CA dropped): a bundle change alone.
  const bundleOnly = nextEvent<[string]>(source, 'ca-bundle-change');
  await writer.write({ 'tls.crt': leaf4.certPem, 'tls.key': leaf4.keyPem, 'ca.crt': ca2.certPem });
  const [bundle] = await bundleOnly;
  t.equal(bundle, ca2.certPem);
  t.equal(events.length, 3, 'no serving change for a CA-only update');
});

t.test('plain file rewrites (no symlinks) are followed; rewriting the same material changes nothing', async (t) => {
  const dir = await tempDir(t);
  const put = async (name: string, text: string): Promise<void> => {
    await writeFile(join(dir, `${name}.tmp`), text);
    await rename(join(dir, `${name}.tmp`), join(dir, name));
  };
  await put('tls.crt', leaf1.certPem);
  await put('tls.key', leaf1.keyPem);
  await put('ca.crt', ca1.certPem);
  const { source, probe } = fileSource(dir);
  await source.load(AbortSignal.timeout(5_000));
  source.start(AbortSignal.timeout(30_000));
  t.teardown(() => source.stop());
  let events = 0;
  source.on('ca-bundle-change', () => events++);
  const changed = nextEvent<[ServingMaterial]>(source, 'serving-change');
  await put('tls.crt', leaf2.certPem);
  await put('tls.key', leaf2.keyPem);
  const [next] = await changed;
  t.equal(next.certPem, leaf2.certPem);
  t.equal(events, 0);
  t.equal(await probe.value('kube_admission_certificate_reloads_total'), 1);

  // Same certificate with CRLF line ends and a trailing blank line: the bytes differ, the material does not.
  await put('ca.crt', `${ca1.certPem.replace(/\n/g, '\r\n')}\r\n`);
  await put('tls.crt', leaf3.certPem);
  await put('tls.key', leaf3.keyPem);
  await nextEvent(source, 'serving-change');
  t.equal(events, 0, 'a reformatted ca.crt is not a bundle change');
});

t.test('the poll alone picks up a rotation when fs events are unavailable', async (t) => {
  const dir = await tempDir(t);
  const writer = new AtomicWriter(dir);
  await writer.write({ 'tls.crt': leaf1.certPem, 'tls.key': leaf1.keyPem, 'ca.crt': ca1.certPem });
  const log = capturingLogger();
  const probe = metricsProbe();
  const source = createFileMaterial({ certDir: dir, ...SERVICE, pollIntervalMs: 50, settleMs: 10, useFsEvents: false, logger: log.logger, metrics: probe.metrics });
  await source.load(AbortSignal.timeout(5_000));
  source.start(AbortSignal.timeout(30_000));
  t.teardown(() => source.stop());
  const changed = nextEvent<[ServingMaterial]>(source, 'serving-change');
  await writer.write({ 'tls.crt': leaf2.certPem, 'tls.key': leaf2.keyPem, 'ca.crt': ca1.certPem });
  t.equal((await changed)[0].certPem, leaf2.certPem);
});

t.test('invalid material at start is a clear error naming the file and the problem', async (t) => {
  const dir = await tempDir(t);
  const writer = new AtomicWriter(dir);
  await writer.write({ 'tls.crt': leaf1.certPem, 'tls.key': leaf1.keyPem });
  await t.rejects(fileSource(dir).source.load(AbortSignal.timeout(5_000)), {
    message: `TLS material in ${dir} is not usable: ${join(dir, 'ca.crt')}: missing or unreadable`,
  });
  const expiredLeaf = await makeLeaf(ca1, sans, new Date(Date.now() - 10 * DAY_MS), 2);
  await writer.write({ 'tls.crt': expiredLeaf.certPem, 'tls.key': expiredLeaf.keyPem, 'ca.crt': ca1.certPem });
  await t.rejects(fileSource(dir).source.load(AbortSignal.timeout(5_000)), { message: new RegExp(`${join(dir, 'tls.crt')}: expired at `) });
  await writer.write({ 'tls.crt': leaf4.certPem, 'tls.key': leaf4.keyPem, 'ca.crt': ca1.certPem });
  await t.rejects(fileSource(dir).source.load(AbortSignal.timeout(5_000)), {
    message: new RegExp(`${join(dir, 'tls.crt')}: does not chain to a CA in ${join(dir, 'ca.crt')}`),
  });
  t.throws(() => fileSource(dir).source.current(), { message: /before it was loaded/ });
});
