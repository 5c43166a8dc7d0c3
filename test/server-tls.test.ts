import https from 'node:https';
import tls from 'node:tls';
import t from 'tap';
import {
  createTestCa,
  issueServingCert,
  podReview,
  request,
  serve,
  TEST_SERVER_NAME,
  validating,
  type ReviewResponse,
} from './support/server/server-harness.js';

const ca = createTestCa();
let handled = 0;
const allow = validating('allow', () => {
  handled++;
  return { allowed: true };
});

/** Resolves with the negotiated protocol and cipher, or rejects with the handshake error. */
function handshake(port: number, options: tls.ConnectionOptions): Promise<{ protocol: string | null; cipher: string }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: TEST_SERVER_NAME, ca: ca.certPem, ...options }, () => {
      const result = { protocol: socket.getProtocol(), cipher: socket.getCipher().name };
      socket.end();
      resolve(result);
    });
    socket.setTimeout(5000, () => socket.destroy(new Error('handshake timeout')));
    socket.on('error', reject);
  });
}

/** Resolves with the error that ends a client-initiated TLS 1.2 renegotiation, or null when it succeeds. */
function renegotiation(port: number): Promise<Error | null> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: TEST_SERVER_NAME, ca: ca.certPem, maxVersion: 'TLSv1.2' }, () => {
      socket.renegotiate({}, (error) => {
        socket.destroy();
        resolve(error ?? null);
      });
      socket.resume();
    });
    socket.setTimeout(5000, () => socket.destroy(new Error('renegotiation timeout')));
    socket.on('error', resolve);
  });
}

t.test('protocol and cipher policy', async (t) => {
  const served = await serve([allow], { ca });
  t.teardown(() => served.server.close(1000));
  const tls13 = await handshake(served.port, {});
  t.equal(tls13.protocol, 'TLSv1.3');
  const tls12 = await handshake(served.port, { maxVersion: 'TLSv1.2' });
  t.equal(tls12.protocol, 'TLSv1.2');
  t.match(tls12.cipher, /^ECDHE-RSA-(AES\d+-GCM|CHACHA20-POLY1305)/, 'ECDHE + AEAD negotiated');

  await t.rejects(
    handshake(served.port, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }),
    /alert protocol version/,
    'TLS 1.1 is refused by the server',
  );
  await t.rejects(handshake(served.port, { maxVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256' }), /alert handshake failure/, 'RSA key transport is refused');
  await t.rejects(handshake(served.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA' }), /alert handshake failure/, 'CBC suites are refused');
  await t.rejects(handshake(served.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA256' }), /alert handshake failure/, 'CBC-SHA256 suites are refused');
  await t.rejects(handshake(served.port, { servername: 'other.example', checkServerIdentity: tls.checkServerIdentity }), 'wrong name fails verification');
});

t.test('client-initiated renegotiation is refused, also after a certificate swap', async (t) => {
  const served = await serve([allow], { ca });
  t.teardown(() => served.server.close(1000));
  t.match(await renegotiation(served.port), /no renegotiation/);
  served.server.updateCertificate(issueServingCert(ca));
  t.match(await renegotiation(served.port), /no renegotiation/, 'the swapped context refuses it too');
});

t.test('keep-alive connections are reused', async (t) => {
  const served = await serve([allow], { ca });
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(async () => {
    agent.destroy();
    await served.server.close(1000);
  });
  const first = await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem, agent });
  const second = await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem, agent });
  t.equal(first.status, 200);
  t.equal(second.status, 200);
  t.notMatch(first.headers.connection, /close/i);
  t.equal(first.localPort, second.localPort, 'the same socket served both');
});

t.test('certificate swap: new connections see the new certificate, open ones keep working', async (t) => {
  const first = issueServingCert(ca);
  const served = await serve([allow], { ca, serving: first });
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(async () => {
    agent.destroy();
    await served.server.close(1000);
  });
  const before = await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem, agent });
  const second = issueServingCert(ca);
  served.server.updateCertificate(second);

  const fresh = await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem });
  t.equal(fresh.status, 200);
  t.not(fresh.peerSerial, before.peerSerial, 'a new connection gets the new certificate');

  const reused = await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem, agent });
  t.equal(reused.status, 200);
  t.equal(reused.localPort, before.localPort, 'the old keep-alive connection is still used');
  t.equal(reused.peerSerial, before.peerSerial, 'and still carries the old certificate');

  const again = await handshake(served.port, { maxVersion: 'TLSv1.2' });
  t.match(again.cipher, /^ECDHE-RSA-.*(GCM|POLY1305)/, 'the swapped context keeps the cipher policy');
  await t.rejects(
    handshake(served.port, { maxVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256' }),
    /alert handshake failure/,
    'and still refuses non-ECDHE suites',
  );
});

t.test('client CA mode: a client without a valid certificate never reaches a handler; the served entries stay open to it', async (t) => {
  const clientCa = createTestCa('apiserver client CA');
  const otherCa = createTestCa('some other CA');
  const served = await serve([allow], { ca, clientCaPem: clientCa.certPem });
  t.teardown(() => served.server.close(1000));
  const good = clientCa.issue({ commonName: 'kube-apiserver', usage: 'client' });
  const stranger = otherCa.issue({ commonName: 'intruder', usage: 'client' });
  const before = handled;
  const refused = (result: { status: number; json: unknown }, what: string): void => {
    t.equal(result.status, 401, `${what}: 401`);
    t.match((result.json as { error?: string }).error, /^a client certificate signed by the client CA \(--client-ca\) is required: /, `${what}: says what is missing`);
  };

  refused(await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem }), 'no certificate');
  refused(await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem, cert: stranger.certPem, key: stranger.keyPem }), 'a certificate from another CA');
  refused(await request(served.port, '/metrics', undefined, { ca: ca.certPem, method: 'GET' }), 'another path without a certificate');
  t.equal(handled, before, 'no handler ran');

  // The leader asks every replica which entries it serves, with no kube-apiserver certificate to show.
  const entries = await request(served.port, '/served-entries', undefined, { ca: ca.certPem, method: 'GET' });
  t.equal(entries.status, 200, 'GET /served-entries needs no client certificate');
  t.same(entries.json, { validating: ['allow'], mutating: [] });

  const ok = await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem, cert: good.certPem, key: good.keyPem });
  t.equal(ok.status, 200);
  t.equal((ok.json as ReviewResponse).response.allowed, true);

  // Reload: the new CA is trusted for new connections, the old one no longer.
  served.server.updateClientCa(otherCa.certPem);
  const swapped = await request(served.port, '/validate/allow', podReview(), {
    ca: ca.certPem,
    cert: stranger.certPem,
    key: stranger.keyPem,
  });
  t.equal(swapped.status, 200);
  refused(await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem, cert: good.certPem, key: good.keyPem }), 'the replaced CA');

  // Shutting down: a refusal ends its connection, as every other answer does then.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  t.notMatch((await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem, agent })).headers.connection, /close/i, 'a refusal keeps the connection while serving');
  served.server.stopKeepAlive();
  const draining = await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem, agent });
  refused(draining, 'no certificate, while draining');
  t.match(draining.headers.connection, /close/i, 'and ends its connection');
});

t.test('updateClientCa without client-certificate mode is refused', async (t) => {
  const served = await serve([allow], { ca });
  t.teardown(() => served.server.close(1000));
  t.throws(() => served.server.updateClientCa(ca.certPem), /started without a client CA/);
});
