import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { servingSans } from '../src/tls/sans.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { servedBy } from './support/tls/served-certificate.js';
import { podReview } from './support/server/server-harness.js';
import { makeCa, makeLeaf } from './support/tls/tls-fixtures.js';

const HOST = `${NAME}.${NAMESPACE}.svc`;
const SANS = servingSans({ serviceName: NAME, namespace: NAMESPACE, local: false, extraSans: [] });

const serialBySocket = new WeakMap<TLSSocket, string>();

/**
 * One real AdmissionReview on `agent`, as kube-apiserver sends it; it must get a valid 200 answer
 * for this very review. Says whether it rode an already-open connection, and on which certificate.
 */
function review(port: number, caPem: string, agent: Agent): Promise<{ reused: boolean; serial: string }> {
  const body = podReview({ labels: { app: 'web' } }) as { request: { uid: string } };
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate/deny-privileged?timeout=10s',
        method: 'POST',
        servername: HOST,
        ca: caPem,
        agent,
        timeout: EVENT_MS,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        // Node only exposes the peer certificate on a socket's first request: remember it per socket.
        if (!serialBySocket.has(socket)) serialBySocket.set(socket, socket.getPeerX509Certificate()?.serialNumber ?? '');
        const serial = serialBySocket.get(socket) ?? '';
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion?: string; kind?: string; response?: { uid?: string; allowed?: boolean } };
            if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
            if (answer.apiVersion !== 'admission.k8s.io/v1' || answer.kind !== 'AdmissionReview') throw new Error(`not an AdmissionReview: ${JSON.stringify(answer)}`);
            if (answer.response?.uid !== body.request.uid) throw new Error(`answered uid ${answer.response?.uid}, sent ${body.request.uid}`);
            if (answer.response.allowed !== true) throw new Error(`a plain pod was not allowed: ${JSON.stringify(answer.response)}`);
            resolve({ reused: req.reusedSocket, serial });
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer to a review within ${EVENT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
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
  const first = await review(replica.port, ca1.certPem, agent);
  t.equal(first.serial, new X509Certificate(leaf1.certPem).serialNumber, 'serves the mounted certificate');

  // A new leaf from the same CA, the way cert-manager renews.
  const leaf2 = await makeLeaf(ca1, SANS);
  await volume.write({ 'tls.crt': leaf2.certPem, 'tls.key': leaf2.keyPem, 'ca.crt': ca1.certPem });
  await replica.child.waitForMessage('TLS material reloaded from files', EVENT_MS);
  const { served } = await servedBy(replica.port, HOST, ca1.certPem);
  t.equal(served.serialNumber, new X509Certificate(leaf2.certPem).serialNumber, 'a new connection gets the new certificate');
  const again = await review(replica.port, ca1.certPem, agent);
  t.ok(again.reused, 'the open keep-alive connection was reused');
  t.equal(again.serial, first.serial, 'and still carries the old certificate, answering reviews validly');

  // Invalid material (a SAN that does not cover the service): the old one stays.
  const wrong = await makeLeaf(ca1, { dnsNames: ['somebody-else.example.com'], ipAddresses: [] });
  await volume.write({ 'tls.crt': wrong.certPem, 'tls.key': wrong.keyPem, 'ca.crt': ca1.certPem });
  const rejected = await replica.child.waitForMessage('new TLS material rejected; keeping the current material', EVENT_MS);
  t.match(JSON.stringify(rejected['problems']), /kube-admission-server\.kas\.svc/);
  t.equal((await servedBy(replica.port, HOST, ca1.certPem)).served.serialNumber, new X509Certificate(leaf2.certPem).serialNumber, 'still the last valid certificate');
  const metrics = await (await fetch(`http://127.0.0.1:${replica.healthPort}/metrics`, { signal: AbortSignal.timeout(EVENT_MS) })).text();
  t.match(metrics, /kube_admission_certificate_reload_errors_total 1/);

  // A new CA: the leader pushes the new caBundle, keeping the old CA for the overlap (--ca-overlap,
  // 1 h by default), and kube-apiserver's calls keep working.
  const ca2 = await makeCa(new Date(), 365, 'ca two');
  const leaf3 = await makeLeaf(ca2, SANS);
  const reloadedAt = replica.child.logs.length;
  await volume.write({ 'tls.crt': leaf3.certPem, 'tls.key': leaf3.keyPem, 'ca.crt': ca2.certPem });
  await replica.child.waitForLog((l) => l.msg === 'TLS material reloaded from files' && replica.child.logs.indexOf(l) >= reloadedAt, EVENT_MS);
  const bothCas = [ca1.certPem, ca2.certPem].map((pem) => new X509Certificate(pem).fingerprint256).sort();
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, (object) => {
    const webhooks = (object as { webhooks?: { clientConfig: { caBundle: string } }[] }).webhooks ?? [];
    const held = (w: { clientConfig: { caBundle: string } }): string[] =>
      (Buffer.from(w.clientConfig.caBundle, 'base64').toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((pem) => new X509Certificate(pem).fingerprint256).sort();
    return webhooks.length > 0 && webhooks.every((w) => JSON.stringify(held(w)) === JSON.stringify(bothCas));
  }, { timeoutMs: EVENT_MS });
  const caller = cluster.caller(t, () => replica.port);
  const admitted = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(admitted.allowed, true, 'admission through the new caBundle works');
  t.equal((await replica.child.stop()).code, 0);
});
