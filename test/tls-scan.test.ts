import t, { type Test } from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import forge from 'node-forge';
import { probeHello } from '../bench/tls-scan/hello-probe.js';
import { scanTarget } from '../bench/tls-scan/scan.js';
import { runSslscan } from '../bench/tls-scan/sslscan.js';
import { COMPRESSION_DEFLATE, offeredCompressionMethods, serverHello } from '../bench/tls-scan/tls-records.js';
import { judge, type Evidence, type Problem } from '../bench/tls-scan/verdict.js';
import { SERVER_CIPHERS } from '../src/server/tls-options.js';
import { ANY_PORTS, ChildServer } from './support/server/child-server.js';
import { STARTUP_MS } from './support/deadline.js';

const SERVICE_NAME = 'kube-admission-server.default.svc';

function problemKeys(problems: readonly Problem[]): string[] {
  return problems.map((p) => `${p.check}:${p.subject}`).sort();
}

async function listen(t: Test, server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** A self-signed certificate with a 1024-bit RSA key, signed with SHA-1. */
function weakCertificate(): { key: string; cert: string } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(key) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 3600_000);
  cert.setSubject([{ name: 'commonName', value: 'weak.example' }]);
  cert.setIssuer(cert.subject.attributes);
  cert.sign(forgeKey, forge.md.sha1.create());
  return { key, cert: forge.pki.certificateToPem(cert) };
}

t.test('the compiled server passes the scan: TLS 1.2/1.3, ECDHE/TLS 1.3 AEAD only, no renegotiation, no compression', async (t) => {
  const certDir = await mkdtemp(join(tmpdir(), 'kas-tls-scan-'));
  t.teardown(() => rm(certDir, { recursive: true, force: true }));
  const server = new ChildServer([...ANY_PORTS, '--cert-dir', certDir]);
  t.teardown(() => server.stop('SIGKILL'));
  const { port } = await server.listening();
  await server.waitForMessage('ready', STARTUP_MS);

  const { evidence, problems } = await scanTarget({ host: '127.0.0.1', port, serverName: SERVICE_NAME });
  t.same(problems, [], 'the verdict lists no problem');
  const { sslscan } = evidence;
  t.same(sslscan.protocols.filter((p) => p.enabled).map((p) => p.name), ['TLSv1.2', 'TLSv1.3']);
  const rsaSuites = SERVER_CIPHERS.split(':').filter((name) => !name.includes('ECDSA'));
  t.same(new Set(sslscan.ciphers.map((c) => c.name)), new Set(rsaSuites), 'exactly the configured suites usable with an RSA key');
  t.ok(sslscan.groups.some((g) => g.name === 'x25519'), 'X25519 key exchange');
  t.match(sslscan.certificate, { keyType: 'RSA', keyBits: 2048, signatureAlgorithm: 'sha256WithRSAEncryption', subject: SERVICE_NAME });
  t.match(evidence.renegotiation, { outcome: 'refused', reason: 'no renegotiation' });
  t.match(evidence.hello, { outcome: 'negotiated', compression: false, secureRenegotiation: true });

  t.equal((await server.stop('SIGTERM')).code, 0, 'the server still exits cleanly after the scan');
});

t.test('a weak server: the verdict names exactly its weaknesses', async (t) => {
  const weak = createTlsServer(
    {
      ...weakCertificate(),
      minVersion: 'TLSv1',
      maxVersion: 'TLSv1.2',
      ciphers: 'AES128-SHA:ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0',
    },
    (socket) => {
      socket.on('error', () => socket.destroy());
      socket.resume();
    },
  );
  const port = await listen(t, weak);
  const { problems } = await scanTarget({ host: '127.0.0.1', port });
  t.same(problemKeys(problems), [
    'cipher:AES128-SHA',
    'cipher:ECDHE-RSA-AES128-SHA',
    'key:RSA 1024',
    'protocol:TLSv1.0',
    'protocol:TLSv1.1',
    'renegotiation:client-initiated',
    'signature:sha1WithRSAEncryption',
  ]);
  t.match(problems.find((p) => p.subject === 'AES128-SHA')?.detail, /TLSv1\.2, TLSv1\.1, TLSv1\.0/, 'names every protocol that accepts the suite');
});

t.test('a server that chooses DEFLATE compression is caught by the ClientHello probe', async (t) => {
  const offered: number[][] = [];
  const compressing = createNetServer((socket) => {
    socket.once('data', (clientHello: Buffer) => {
      offered.push(offeredCompressionMethods(clientHello));
      socket.end(serverHello({ version: 0x0303, cipherSuite: 0xc02f, compressionMethod: COMPRESSION_DEFLATE, extensionTypes: [] }));
    });
  });
  const port = await listen(t, compressing);
  const hello = await probeHello({ host: '127.0.0.1', port });
  t.same(offered, [[COMPRESSION_DEFLATE, 0]], 'the probe offers DEFLATE before null');
  t.same(hello, { outcome: 'negotiated', compression: true, secureRenegotiation: false, cipherSuite: 0xc02f });
});

/** Evidence of a clean TLS 1.2/1.3 server, for varying one finding at a time. */
function cleanEvidence(): Evidence {
  return {
    sslscan: {
      version: '2.0.7',
      openssl: 'OpenSSL 3.0.19',
      protocols: ['SSLv2', 'SSLv3', 'TLSv1.0', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'].map((name) => ({ name, enabled: name.startsWith('TLSv1.') && name >= 'TLSv1.2' })),
      ciphers: [
        { protocol: 'TLSv1.3', name: 'TLS_AES_128_GCM_SHA256', bits: 128, preferred: true },
        { protocol: 'TLSv1.2', name: 'ECDHE-RSA-CHACHA20-POLY1305', bits: 256, preferred: true },
      ],
      groups: [{ protocol: 'TLSv1.3', name: 'x25519', bits: 128 }],
      renegotiation: { supported: false, secure: false },
      heartbleed: [{ protocol: 'TLSv1.2', vulnerable: false }],
      certificate: { keyType: 'RSA', keyBits: 2048, signatureAlgorithm: 'sha256WithRSAEncryption', subject: SERVICE_NAME, altNames: '' },
    },
    hello: { outcome: 'negotiated', compression: false, secureRenegotiation: true, cipherSuite: 0xc02f },
    renegotiation: { outcome: 'refused', reason: 'no renegotiation' },
  };
}

t.test('the verdict flags what the scanners report, and a check without evidence', async (t) => {
  t.same(judge(cleanEvidence()), [], 'clean evidence passes');

  const findings = cleanEvidence();
  findings.sslscan.renegotiation = { supported: true, secure: false };
  findings.sslscan.heartbleed = [{ protocol: 'TLSv1.2', vulnerable: true }];
  findings.sslscan.compression = true;
  findings.sslscan.ciphers.push({ protocol: 'TLSv1.3', name: 'TLS_AES_128_CCM_8_SHA256', bits: 128, preferred: false });
  t.same(problemKeys(judge(findings)), ['cipher:TLS_AES_128_CCM_8_SHA256', 'compression:DEFLATE', 'heartbleed:TLSv1.2', 'renegotiation:insecure']);

  const unpatched = cleanEvidence();
  unpatched.hello = { outcome: 'negotiated', compression: false, secureRenegotiation: false, cipherSuite: 0xc02f };
  unpatched.renegotiation = { outcome: 'accepted' };
  t.same(problemKeys(judge(unpatched)), ['renegotiation:client-initiated', 'renegotiation:insecure'], 'renegotiation without RFC 5746');

  const blind = cleanEvidence();
  blind.sslscan.heartbleed = [];
  delete blind.sslscan.certificate;
  blind.sslscan.protocols = blind.sslscan.protocols.filter((p) => p.name !== 'SSLv3');
  blind.renegotiation = { outcome: 'no-tls12', reason: 'ECONNRESET' };
  t.same(problemKeys(judge(blind)), ['scan:certificate', 'scan:heartbleed', 'scan:protocols', 'scan:renegotiation'], 'a missing result fails the scan');
});

t.test('without sslscan the scan fails and says how to install it', async (t) => {
  const path = process.env['PATH'];
  process.env['PATH'] = '/nonexistent';
  t.teardown(() => {
    process.env['PATH'] = path;
  });
  await t.rejects(runSslscan({ host: '127.0.0.1', port: 1 }), /sslscan is not installed.*apt-get install -y --no-install-recommends sslscan/);
});
