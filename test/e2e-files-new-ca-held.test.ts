/**
 * Files mode, the leader's mounted Secret moves to a new CA while the API refuses its caBundle
 * writes (503s): the leader keeps serving its previous leaf, which the registered caBundle
 * trusts, instead of a chain kube-apiserver cannot verify; the failed writes are retried by
 * themselves; once the caBundle holds the new CA, the leader moves to the new leaf a propagation
 * grace later. Under a steady admission load, through the current and the slowest kube-apiserver,
 * no call fails.
 */
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { servingSans } from '../src/tls/sans.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { logTimeMs } from './support/server/child-server.js';
import { steadyAdmission } from './support/kube/steady-admission.js';
import { servedBy } from './support/tls/served-certificate.js';
import { makeCa, makeLeaf } from './support/tls/tls-fixtures.js';

const HOST = `${NAME}.${NAMESPACE}.svc`;
const SANS = servingSans({ serviceName: NAME, namespace: NAMESPACE, local: false, extraSans: [] });
/** The server's propagation grace (src/registration/propagation-grace.ts), as the behaviour to check. */
const GRACE_MS = 3000;
const LAG_MS = 1500;
const CLOCK_SLACK_MS = 20;
const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;
const serial = (pem: string): string => new X509Certificate(pem).serialNumber;

t.test('files mode: a leaf under a CA the caBundle does not hold yet is not served while the bundle can still be fixed', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const [ca1, ca2] = await Promise.all([makeCa(new Date(), 365, 'ca one'), makeCa(new Date(), 365, 'ca two')]);
  const [leaf1, leaf2] = await Promise.all([makeLeaf(ca1, SANS), makeLeaf(ca2, SANS)]);
  const volume = new AtomicWriter(join(cluster.dir, 'mounted-secret'));
  await volume.write({ 'tls.crt': leaf1.certPem, 'tls.key': leaf1.keyPem, 'ca.crt': ca1.certPem });
  const leader = await cluster.startReplica(t, 'kas-a', ['--tls-mode', 'files', '--cert-dir', volume.targetDir], { WATCH_POLL_INTERVAL: '300ms', RESYNC_PERIOD: '10m' });
  const request = { operation: 'CREATE' as const, object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE };
  const load = steadyAdmission(t, [cluster.caller(t, () => leader.port), cluster.laggingCaller(t, () => leader.port, LAG_MS)], request);

  // The API refuses every caBundle write; cert-manager moves the Secret to a new CA meanwhile.
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) cluster.api.faults.add({ resource, verb: 'update' }, { status: 503 });
  const rotatedAt = performance.now();
  await volume.write({ 'tls.crt': leaf2.certPem, 'tls.key': leaf2.keyPem, 'ca.crt': ca2.certPem });
  await leader.child.waitForMessage('new certificate held: the live caBundles do not trust its CA yet; serving the previous one meanwhile', EVENT_MS);
  await leader.child.waitForMessage('reconcile failed; retrying', EVENT_MS);
  t.ok(cluster.api.requests.some((r) => r.verb === 'update' && r.startedAt > rotatedAt && r.status === 503), 'the caBundle push was refused');
  t.equal((await servedBy(leader.port, HOST, ca1.certPem)).served.serialNumber, serial(leaf1.certPem), 'the previous leaf is still served');
  t.equal(cluster.bundlesHold([fingerprint(ca2.certPem)]), false, 'while the caBundle lacks the new CA');
  t.equal((await fetch(`http://127.0.0.1:${leader.healthPort}/readyz`, { signal: AbortSignal.timeout(EVENT_MS) })).status, 200, 'and the replica is Ready on it');

  // The API recovers: the retried pass lands (no resync for 10 minutes), then the move, a grace later.
  cluster.api.faults.clear();
  for (const kind of ['mutating', 'validating'] as const) {
    await cluster.api.store.waitFor(`${kind}webhookconfigurations`, undefined, NAME, () => cluster.caBundleFingerprints(kind).every((bundle) => bundle.includes(fingerprint(ca2.certPem))), { timeoutMs: 60_000 });
  }
  // Sent, and answered 200 or still in flight: the store changes before the response is written.
  const put = cluster.api.requests.filter((r) => r.verb === 'update' && r.resource?.endsWith('webhookconfigurations') && (r.status === 200 || r.endedAt === undefined)).at(-1)!;
  t.ok(cluster.bundlesHold([fingerprint(ca1.certPem), fingerprint(ca2.certPem)]), 'both CAs registered (the overlap)');
  const moved = await leader.child.waitForMessage('serving the new certificate: every live caBundle trusts its CA', EVENT_MS);
  t.ok(logTimeMs(moved) >= performance.timeOrigin + put.startedAt + GRACE_MS - CLOCK_SLACK_MS, `moved ${Math.round(logTimeMs(moved) - performance.timeOrigin - put.startedAt)} ms after the write that made the caBundle hold the new CA`);
  t.equal((await servedBy(leader.port, HOST, ca2.certPem)).served.serialNumber, serial(leaf2.certPem), 'the new leaf is served');

  const { admissions, failed } = await load.stop();
  t.ok(admissions > 10, `${admissions} rounds of admissions through the current and the slowest kube-apiserver`);
  t.same(failed.map((f) => `${f.caller}: ${f.error}`), [], 'no webhook call failed');
  t.equal((await leader.child.stop()).code, 0);
});
