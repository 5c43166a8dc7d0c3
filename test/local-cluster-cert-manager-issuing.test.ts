// The cert-manager stand-in's certificates as cert-manager (Go's x509) makes them: a signed
// certificate names its issuer's key (authorityKeyIdentifier), so a CA re-made with a new key under
// the same name, both in one bundle for the overlap, is told apart by every verifier. The oracle is
// a real TLS handshake through node (OpenSSL), which picks the issuer by name when no key id says.
import { once } from 'node:events';
import { connect, createServer, type Server } from 'node:tls';
import t, { type Test } from 'tap';
import { issue } from '../local-cluster/cluster/cert-manager/issuing.js';

const CA_SPEC = { isCA: true, commonName: 'kube-admission-server-ca', privateKey: { algorithm: 'RSA', size: 2048 } };
const LEAF_SPEC = { commonName: 'hook.ns.svc', dnsNames: ['hook.ns.svc'], usages: ['server auth', 'digital signature', 'key encipherment'], privateKey: { algorithm: 'RSA', size: 2048 } };

async function handshake(t: Test, leaf: { certPem: string; keyPem: string }, bundle: string[]): Promise<string | undefined> {
  const server: Server = createServer({ cert: leaf.certPem, key: leaf.keyPem });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const port = (server.address() as { port: number }).port;
  return await new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'hook.ns.svc', ca: bundle }, () => {
      socket.end();
      resolve(undefined);
    });
    socket.on('error', (error) => resolve(error.message));
  });
}

t.test('a leaf of a CA re-made with a new key verifies against a bundle holding both CAs of that name', async (t) => {
  const ca1 = issue(CA_SPEC, undefined);
  const ca2 = issue(CA_SPEC, undefined);
  const leaf2 = issue(LEAF_SPEC, { certPem: ca2.certPem, keyPem: ca2.keyPem });
  t.equal(await handshake(t, leaf2, [ca2.certPem]), undefined, 'against its own CA');
  t.equal(await handshake(t, leaf2, [ca1.certPem, ca2.certPem]), undefined, 'against the overlap bundle, the old CA first');
  t.match(await handshake(t, leaf2, [ca1.certPem]), /signature|unable to verify|self.signed/, 'and not against the old CA alone');
});
