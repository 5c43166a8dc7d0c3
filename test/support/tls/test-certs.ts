/**
 * Test certificates for the server tests (sync): a CA and leaves it signed, keys from node:crypto,
 * certificates from node-forge, independent of src/. Files-mode fixtures (any key type) are in tls-fixtures.ts.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export const TEST_SERVER_NAME = 'kube-admission-server.default.svc';

export interface TestKeyPair {
  certPem: string;
  keyPem: string;
}

export interface TestCa extends TestKeyPair {
  /** Signs a leaf for `hosts` (DNS names or IPs) with the given extended key usage. */
  issue(options: { commonName: string; hosts?: string[]; usage: 'server' | 'client' }): TestKeyPair;
}

function rsaKeys(): { keyPem: string; publicKey: forge.pki.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  return { keyPem, privateKey: forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e) };
}

function baseCertificate(publicKey: forge.pki.PublicKey, commonName: string): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = '01' + randomBytes(15).toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  return cert;
}

const IP = /^\d+\.\d+\.\d+\.\d+$/;

export function createTestCa(commonName = 'kube-admission-server test CA'): TestCa {
  const keys = rsaKeys();
  const caCert = baseCertificate(keys.publicKey, commonName);
  caCert.setIssuer(caCert.subject.attributes);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  caCert.sign(keys.privateKey, forge.md.sha256.create());
  return {
    certPem: forge.pki.certificateToPem(caCert),
    keyPem: keys.keyPem,
    issue({ commonName: leafName, hosts = [], usage }) {
      const leafKeys = rsaKeys();
      const leaf = baseCertificate(leafKeys.publicKey, leafName);
      leaf.setIssuer(caCert.subject.attributes);
      const altNames = hosts.map((host) => (IP.test(host) ? { type: 7, ip: host } : { type: 2, value: host }));
      leaf.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: usage === 'server', clientAuth: usage === 'client' },
        ...(altNames.length > 0 ? [{ name: 'subjectAltName', altNames }] : []),
      ]);
      leaf.sign(keys.privateKey, forge.md.sha256.create());
      return { certPem: forge.pki.certificateToPem(leaf), keyPem: leafKeys.keyPem };
    },
  };
}

/** A serving leaf for the service name, localhost and 127.0.0.1. */
export function issueServingCert(ca: TestCa, commonName = TEST_SERVER_NAME): TestKeyPair {
  return ca.issue({ commonName, hosts: [TEST_SERVER_NAME, 'localhost', '127.0.0.1'], usage: 'server' });
}
