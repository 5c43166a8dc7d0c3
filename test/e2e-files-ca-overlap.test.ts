/**
 * Files mode, a mounted ca.crt that moves to a new CA, with two replicas whose volumes are
 * updated at different moments (as kubelet does): the registered caBundle keeps the old CA for the
 * overlap, across a leader change, so every replica's chain is trusted throughout; then the old
 * CA is pruned.
 */
import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { servingSans } from '../src/tls/sans.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture, type Replica } from './support/kube/cluster-harness.js';
import { servedBy } from './support/tls/served-certificate.js';
import { makeCa, makeLeaf, type CertificateAndKey } from './support/tls/tls-fixtures.js';

const HOST = `${NAME}.${NAMESPACE}.svc`;
const SANS = servingSans({ serviceName: NAME, namespace: NAMESPACE, local: false, extraSans: [] });
const OVERLAP_MS = 8_000;
/** Bound of each wait: generous, for a busy machine; every wait ends as soon as its event happens. */
const WAIT_MS = 60_000;
const fp = (pem: string): string => new X509Certificate(pem).fingerprint256;

t.test('files mode: a new CA in ca.crt is added to the registered caBundle next to the old one, which stays for the overlap', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a', 'kas-b']);
  const ca1 = await makeCa(new Date(), 365, 'ca one');
  const ca2 = await makeCa(new Date(), 365, 'ca two');
  // cert-manager writes the leaf key in PKCS#1 (RSA) or SEC1 (EC): both kinds, across the move.
  const [leafA1, leafB1, leafA2, leafB2] = await Promise.all([
    makeLeaf(ca1, SANS, new Date(), 90, { key: 'rsa-pkcs1' }),
    makeLeaf(ca1, SANS, new Date(), 90, { key: 'ec-sec1' }),
    makeLeaf(ca2, SANS, new Date(), 90, { key: 'ec-sec1' }),
    makeLeaf(ca2, SANS, new Date(), 90, { key: 'rsa-pkcs1' }),
  ]);
  const volumes = { a: new AtomicWriter(join(cluster.dir, 'secret-a')), b: new AtomicWriter(join(cluster.dir, 'secret-b')) };
  const mount = (volume: AtomicWriter, leaf: CertificateAndKey, ca: CertificateAndKey) =>
    volume.write({ 'tls.crt': leaf.certPem, 'tls.key': leaf.keyPem, 'ca.crt': ca.certPem });
  await mount(volumes.a, leafA1, ca1);
  await mount(volumes.b, leafB1, ca1);
  // A resync far beyond the test: pruning at the end of the overlap must come from its own timer.
  // Leadership must not flap on a loaded machine (this test is about the bundle, not about
  // elections): a long lease; the hand-over below is by release, which is immediate anyway.
  const env = { WATCH_POLL_INTERVAL: '300ms', CA_OVERLAP: `${OVERLAP_MS}ms`, RESYNC_PERIOD: '10m', LEASE_DURATION: '30s', LEASE_RENEW_DEADLINE: '20s' };
  const start = (pod: string, volume: AtomicWriter): Promise<Replica> =>
    cluster.startReplica(t, pod, ['--tls-mode', 'files', '--cert-dir', volume.targetDir], env);
  const a = await start('kas-a', volumes.a);
  const b = await start('kas-b', volumes.b);
  await cluster.api.store.waitFor('leases', NAMESPACE, `${NAME}-leader`, (lease) => (lease?.['spec'] as { holderIdentity?: string } | undefined)?.holderIdentity === 'kas-a', { timeoutMs: WAIT_MS });

  const registered = (kinds: readonly ('mutating' | 'validating')[] = ['mutating', 'validating']): string[][] =>
    kinds.flatMap((kind) =>
      (cluster.configuration<{ webhooks?: { clientConfig: { caBundle: string } }[] }>(kind)?.webhooks ?? []).map((w) =>
        (Buffer.from(w.clientConfig.caBundle, 'base64').toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map(fp).sort(),
      ),
    );
  const awaitBundle = async (want: string[], what: string): Promise<number> => {
    const sorted = [...want].sort();
    const began = performance.now();
    for (const kind of ['mutating', 'validating'] as const) {
      // Each wait judges only the kind it watches: a predicate that also read the other kind would
      // be re-checked only on this kind's events, and miss the other one landing afterwards.
      await cluster.api.store.waitFor(`${kind}webhookconfigurations`, undefined, NAME, () => registered([kind]).every((b) => JSON.stringify(b) === JSON.stringify(sorted)), { timeoutMs: WAIT_MS }).catch((error: Error) => {
        throw new Error(`${what}: ${error.message}; registered now: ${JSON.stringify(registered())}; leader logs: ${JSON.stringify(a.child.logs.slice(-8).map((l) => [l.msg, l['error'] ?? l['problems'] ?? l['outcomes'] ?? '']))}`);
      });
    }
    return performance.now() - began;
  };
  await awaitBundle([fp(ca1.certPem)], 'the first registration');

  const admitThrough = async (replica: Replica): Promise<{ allowed: boolean; errors: string[] }> => {
    const caller = cluster.caller(t, () => replica.port);
    const result = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
    return { allowed: result.allowed, errors: caller.calls.filter((c) => c.outcome === 'error').map((c) => c.error ?? '') };
  };

  // The leader's volume moves to CA2 first; the follower's is a "minute" behind.
  await mount(volumes.a, leafA2, ca2);
  await awaitBundle([fp(ca1.certPem), fp(ca2.certPem)], 'the new CA added next to the old one');
  // The leader serves its leaf of CA2 only once every live caBundle has trusted CA2 for the grace.
  await a.child.waitForMessage('serving the new certificate: every live caBundle trusts its CA', WAIT_MS);
  t.equal((await servedBy(a.port, HOST, ca2.certPem)).served.serialNumber, new X509Certificate(leafA2.certPem).serialNumber, 'the leader serves its EC leaf of CA2');
  t.equal((await servedBy(b.port, HOST, ca1.certPem)).served.serialNumber, new X509Certificate(leafB1.certPem).serialNumber, 'the follower still serves its leaf of CA1');
  t.same(await admitThrough(b), { allowed: true, errors: [] }, 'kube-apiserver still trusts the follower on CA1');
  t.same(await admitThrough(a), { allowed: true, errors: [] }, 'and the leader on CA2');

  // The leader goes away (a rolling update): the follower, still on CA1, takes over and keeps both.
  t.equal((await a.child.stop()).code, 0);
  await b.child.waitForMessage('became the leader', WAIT_MS);
  // Its first pass sees CA2 outside its own ca.crt: it records it as retired instead of dropping it.
  const retiredRecord = (): Record<string, string> =>
    JSON.parse(cluster.configuration<{ metadata: { annotations?: Record<string, string> } }>('validating')?.metadata.annotations?.['kube-admission-server/retired-cas'] ?? '{}') as Record<string, string>;
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, () => fp(ca2.certPem) in retiredRecord(), { timeoutMs: WAIT_MS });
  t.same(registered().every((bundle) => bundle.length === 2), true, 'the new leader, whose volume is behind, keeps CA2 registered');
  t.same(await admitThrough(b), { allowed: true, errors: [] });

  // Its volume catches up; after the overlap CA1 leaves the bundle, without any further change.
  await mount(volumes.b, leafB2, ca2);
  await b.child.waitForMessage('TLS material reloaded from files', WAIT_MS);
  t.equal((await servedBy(b.port, HOST, ca2.certPem)).served.serialNumber, new X509Certificate(leafB2.certPem).serialNumber, 'the follower now serves its RSA (PKCS#1) leaf of CA2');
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, () => JSON.stringify(Object.keys(retiredRecord())) === JSON.stringify([fp(ca1.certPem)]), { timeoutMs: WAIT_MS });
  t.pass('CA1 recorded as retired, in the configuration itself');
  t.same(registered().every((bundle) => bundle.length === 2), true, 'CA1 still registered right after the last replica moved');
  const retiredAt = Date.parse(retiredRecord()[fp(ca1.certPem)] ?? '');
  // Bounded far below the 10 min resync: only the overlap's own timer can bring this pass.
  await awaitBundle([fp(ca2.certPem)], 'the old CA pruned after the overlap');
  t.ok(Date.now() >= retiredAt + OVERLAP_MS, 'pruned no earlier than the overlap after its retirement');
  t.same(await admitThrough(b), { allowed: true, errors: [] });
  t.equal((await b.child.stop()).code, 0);
});
