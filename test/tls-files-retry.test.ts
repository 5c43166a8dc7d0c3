import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileMaterial } from '../src/tls/factory.js';
import { servingSans } from '../src/tls/sans.js';
import type { ServingMaterial } from '../src/tls/types.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { TestClock } from './support/tls/tls-clock.js';
import { eventually, fetchOnce, startHttpsServer } from './support/tls/tls-https.js';
import { DAY_MS, capturingLogger, makeCa, makeLeaf, metricsProbe, nextEvent, x509 } from './support/tls/tls-fixtures.js';

const SERVICE = { serviceName: 'hook', namespace: 'ops' };
const HOST = 'hook.ops.svc';
const sans = servingSans({ ...SERVICE, local: false, extraSans: [] });
const ca = await makeCa();
const current = await makeLeaf(ca, sans);
const fp = (pem: string): string => x509(pem).fingerprint256;

async function mountedDir(t: { teardown(fn: () => unknown): void }): Promise<AtomicWriter> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-retry-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const writer = new AtomicWriter(dir);
  await writer.write({ 'tls.crt': current.certPem, 'tls.key': current.keyPem, 'ca.crt': ca.certPem });
  return writer;
}

/** A started source on a mounted directory, with an injected clock and a short poll; stopped at teardown. */
async function clockedSource(t: { teardown(fn: () => unknown): void }) {
  const writer = await mountedDir(t);
  const clock = new TestClock(new Date());
  const log = capturingLogger();
  const probe = metricsProbe();
  const source = createFileMaterial({ certDir: writer.targetDir, ...SERVICE, pollIntervalMs: 30, settleMs: 10, now: clock.now, logger: log.logger, metrics: probe.metrics });
  await source.load(AbortSignal.timeout(5_000));
  source.start(AbortSignal.timeout(60_000));
  t.teardown(() => source.stop());
  return { writer, clock, log, probe, source };
}

t.test('a renewal whose NotBefore is a few seconds ahead is rejected, then served at its NotBefore without any file change', async (t) => {
  const writer = await mountedDir(t);
  const log = capturingLogger();
  const probe = metricsProbe();
  // A poll far longer than the test: only the NotBefore timer can bring the renewal in.
  const source = createFileMaterial({ certDir: writer.targetDir, ...SERVICE, pollIntervalMs: 10 * 60_000, settleMs: 20, logger: log.logger, metrics: probe.metrics });
  const https = await startHttpsServer(await source.load(AbortSignal.timeout(5_000)));
  t.teardown(() => https.close());
  source.on('serving-change', (next) => https.server.setSecureContext({ key: next.keyPem, cert: next.certPem }));
  source.start(AbortSignal.timeout(60_000));
  t.teardown(() => source.stop());

  // cert-manager issued it on a node whose clock runs 3 s ahead of ours.
  const notBefore = new Date(Math.ceil((Date.now() + 3_000) / 1000) * 1000);
  const skewed = await makeLeaf(ca, sans, new Date(), 90, { notBefore });
  const served = nextEvent<[ServingMaterial]>(source, 'serving-change', 30_000);
  await writer.write({ 'tls.crt': skewed.certPem, 'tls.key': skewed.keyPem, 'ca.crt': ca.certPem });
  await eventually(async () => (await probe.value('kube_admission_certificate_reload_errors_total')) === 1, 'the skewed renewal rejected');
  const rejected = log.lines.find((line) => line['msg'] === 'new TLS material rejected; keeping the current material');
  t.match(rejected?.['problems'], [/tls\.crt: not valid before /], 'rejected for its NotBefore');
  t.equal(rejected?.['retryAt'], notBefore.toISOString(), 'and the log says when it is looked at again');
  t.equal((await fetchOnce({ port: https.port, ca: ca.certPem, servername: HOST })).fingerprint, fp(current.certPem), 'the current certificate is still served');

  const [taken] = await served;
  t.ok(Date.now() >= notBefore.getTime(), 'taken no earlier than its NotBefore');
  t.equal(taken.certPem, skewed.certPem);
  t.equal((await fetchOnce({ port: https.port, ca: ca.certPem, servername: HOST })).fingerprint, fp(skewed.certPem), 'a new connection gets the renewal');
  t.equal(await probe.value('kube_admission_certificate_reload_errors_total'), 1, 'counted once');
  t.equal(await probe.value('kube_admission_certificate_reloads_total'), 1);
  t.match(log.lines.find((line) => line['msg'] === 'TLS material reloaded from files'), { retried: true });
});

t.test('with the clock injected, rejected material is looked at again on the poll interval until it becomes valid', async (t) => {
  const { writer, clock, log, probe, source } = await clockedSource(t);

  // A whole day ahead: only the poll's re-check can take it, once the clock has moved.
  const tomorrow = await makeLeaf(ca, sans, new Date(), 90, { notBefore: new Date(clock.now().getTime() + DAY_MS) });
  await writer.write({ 'tls.crt': tomorrow.certPem, 'tls.key': tomorrow.keyPem, 'ca.crt': ca.certPem });
  await eventually(async () => (await probe.value('kube_admission_certificate_reload_errors_total')) === 1, 'the early material rejected');
  await eventually(async () => log.lines.filter((line) => line['msg'] === 'rejected TLS material is still not usable').length >= 3, 'three quiet re-checks');
  t.equal(await probe.value('kube_admission_certificate_reload_errors_total'), 1, 're-checks are not counted as new errors');
  t.equal(source.current().certPem, current.certPem, 'still the current material');

  const taken = nextEvent<[ServingMaterial]>(source, 'serving-change', 10_000);
  clock.advance(DAY_MS + 1_000);
  t.equal((await taken)[0].certPem, tomorrow.certPem, 'taken at a poll once the clock passed its NotBefore');
});

t.test('stop() ends the re-checks', async (t) => {
  const { writer, clock, log, source } = await clockedSource(t);
  const early = await makeLeaf(ca, sans, new Date(), 90, { notBefore: new Date(clock.now().getTime() + DAY_MS) });
  await writer.write({ 'tls.crt': early.certPem, 'tls.key': early.keyPem, 'ca.crt': ca.certPem });
  await eventually(async () => log.lines.some((line) => line['msg'] === 'rejected TLS material is still not usable'), 'a re-check');
  await source.stop();
  const checksAtStop = log.lines.length;
  let changes = 0;
  source.on('serving-change', () => changes++);
  clock.advance(DAY_MS + 1_000);
  await new Promise((resolve) => setTimeout(resolve, 300)); // ten poll intervals: a live timer would re-check
  t.equal(log.lines.length, checksAtStop, 'no re-check after stop');
  t.equal(changes, 0);
});
