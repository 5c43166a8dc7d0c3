import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { servingSans } from '../src/tls/sans.js';
import { AtomicWriter } from './support/atomic-writer.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/cluster-harness.js';
import { servedBy } from './support/served-certificate.js';
import { makeCa, makeLeaf } from './support/tls-fixtures.js';

const HOST = `${NAME}.${NAMESPACE}.svc`;
const SANS = servingSans({ serviceName: NAME, namespace: NAMESPACE, local: false, extraSans: [] });

const serialBySocket = new WeakMap<TLSSocket, string>();

/** One request on `agent`; says whether it rode an already-open connection. */
function ping(port: number, caPem: string, agent: Agent): Promise<{ status: number; reused: boolean; serial: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz-over-tls', method: 'POST', servername: HOST, ca: caPem, agent, headers: { 'content-type': 'application/json' } }, (res) => {
      const socket = res.socket as TLSSocket;
      // Node only exposes the peer certificate on a socket's first request: remember it per socket.
      if (!serialBySocket.has(socket)) serialBySocket.set(socket, socket.getPeerX509Certificate()?.serialNumber ?? '');
      const serial = serialBySocket.get(socket) ?? '';
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, serial }));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

t.test('files mode: rotations through a kubelet-style Secret volume, with no restart and no failed request', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const certDir = join(cluster.dir, 'mounted-secret');
  const volume = new AtomicWriter(certDir);
  const ca1 = await makeCa(new Date(), 365, 'ca one');
  const leaf1 = await makeLeaf(ca1, SANS);
  await volume.write({ 'tls.crt': leaf1.certPem, 'tls.key': leaf1.keyPem, 'ca.crt': ca1.certPem });
  const replica = await cluster.startReplica(t, 'kas-a', ['--tls-mode', 'files', '--cert-dir', certDir], { WATCH_POLL_INTERVAL: '500ms' });

  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const first = await ping(replica.port, ca1.certPem, agent);
  t.equal(first.serial, new X509Certificate(leaf1.certPem).serialNumber, 'serves the mounted certificate');

  // A new leaf from the same CA, the way cert-manager renews.
  const leaf2 = await makeLeaf(ca1, SANS);
  await volume.write({ 'tls.crt': leaf2.certPem, 'tls.key': leaf2.keyPem, 'ca.crt': ca1.certPem });
  await replica.child.waitForMessage('TLS material reloaded from files', 10_000);
  const { served } = await servedBy(replica.port, HOST, ca1.certPem);
  t.equal(served.serialNumber, new X509Certificate(leaf2.certPem).serialNumber, 'a new connection gets the new certificate');
  const again = await ping(replica.port, ca1.certPem, agent);
  t.ok(again.reused, 'the open keep-alive connection was reused');
  t.same([again.status, again.serial], [first.status, first.serial], 'and still carries the old certificate, working');

  // Invalid material (a SAN that does not cover the service): the old one stays.
  const wrong = await makeLeaf(ca1, { dnsNames: ['somebody-else.example.com'], ipAddresses: [] });
  await volume.write({ 'tls.crt': wrong.certPem, 'tls.key': wrong.keyPem, 'ca.crt': ca1.certPem });
  const rejected = await replica.child.waitForMessage('new TLS material rejected; keeping the current material', 10_000);
  t.match(JSON.stringify(rejected['problems']), /kube-admission-server\.kas\.svc/);
  t.equal((await servedBy(replica.port, HOST, ca1.certPem)).served.serialNumber, new X509Certificate(leaf2.certPem).serialNumber, 'still the last valid certificate');
  const metrics = await (await fetch(`http://127.0.0.1:${replica.healthPort}/metrics`)).text();
  t.match(metrics, /kube_admission_certificate_reload_errors_total 1/);

  // A new CA: the leader pushes the new caBundle, keeping the old CA for the overlap (--ca-overlap,
  // 1 h by default), and kube-apiserver's calls keep working.
  const ca2 = await makeCa(new Date(), 365, 'ca two');
  const leaf3 = await makeLeaf(ca2, SANS);
  const reloadedAt = replica.child.logs.length;
  await volume.write({ 'tls.crt': leaf3.certPem, 'tls.key': leaf3.keyPem, 'ca.crt': ca2.certPem });
  await replica.child.waitForLog((l) => l.msg === 'TLS material reloaded from files' && replica.child.logs.indexOf(l) >= reloadedAt, 10_000);
  const bothCas = [ca1.certPem, ca2.certPem].map((pem) => new X509Certificate(pem).fingerprint256).sort();
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, (object) => {
    const webhooks = (object as { webhooks?: { clientConfig: { caBundle: string } }[] }).webhooks ?? [];
    const held = (w: { clientConfig: { caBundle: string } }): string[] =>
      (Buffer.from(w.clientConfig.caBundle, 'base64').toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((pem) => new X509Certificate(pem).fingerprint256).sort();
    return webhooks.length > 0 && webhooks.every((w) => JSON.stringify(held(w)) === JSON.stringify(bothCas));
  }, { timeoutMs: 10_000 });
  const caller = cluster.caller(t, () => replica.port);
  const admitted = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(admitted.allowed, true, 'admission through the new caBundle works');
  t.equal((await replica.child.stop()).code, 0);
});
