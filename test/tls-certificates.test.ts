import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';
import { servingSans, coversSans, certificateSans } from '../src/tls/sans.js';
import { BACKDATE_MS, issueCaCertificate, issueLeafCertificate, type KeyedCertificate } from '../src/tls/certificates.js';
import { generateRsaKey } from '../src/tls/keys.js';
import { DAY_MS, x509 } from './support/tls/tls-fixtures.js';

// This file checks src's own issuer, so it issues with it; node's X509Certificate is the oracle.
async function makeCa(now = new Date(), validityDays = 365): Promise<KeyedCertificate> {
  const keyPem = await generateRsaKey();
  return { certPem: issueCaCertificate({ commonName: 'test CA', validityDays, now, keyPem }), keyPem };
}

async function makeLeaf(ca: KeyedCertificate, wanted: typeof sans, now = new Date(), validityDays = 90): Promise<KeyedCertificate> {
  const keyPem = await generateRsaKey();
  return { certPem: issueLeafCertificate({ commonName: 'leaf', sans: wanted, validityDays, now, keyPem, ca }), keyPem };
}

const sans = servingSans({ serviceName: 'hook', namespace: 'ops', local: false, extraSans: [] });

t.test('serving SANs: the four service names, local names only locally, extras split into DNS and IP', async (t) => {
  t.same(sans, { dnsNames: ['hook', 'hook.ops', 'hook.ops.svc', 'hook.ops.svc.cluster.local'], ipAddresses: [] });
  const local = servingSans({ serviceName: 'hook', namespace: 'ops', local: true, extraSans: ['hook.example.com', '10.0.0.7', '::1', 'hook'] });
  t.same(local.dnsNames, ['hook', 'hook.ops', 'hook.ops.svc', 'hook.ops.svc.cluster.local', 'localhost', 'hook.example.com']);
  t.same(local.ipAddresses, ['127.0.0.1', '10.0.0.7', '::1']);
});

t.test('the CA: self-signed, CA:true critical, keyCertSign, NotBefore one hour back, random serial', async (t) => {
  const now = new Date('2026-01-10T12:00:00Z');
  const [a, b] = await Promise.all([makeCa(now, 5 * 365), makeCa(now, 5 * 365)]);
  const cert = x509(a.certPem);
  t.ok(cert.ca, 'basicConstraints CA');
  t.ok(cert.checkIssued(cert) && cert.verify(cert.publicKey), 'self-signed');
  t.equal(new Date(cert.validFrom).getTime(), now.getTime() - BACKDATE_MS);
  t.equal(new Date(cert.validTo).getTime(), now.getTime() + 5 * 365 * DAY_MS);
  t.not(cert.serialNumber, x509(b.certPem).serialNumber, 'serials differ');
  t.ok(/^[4-7]/.test(cert.serialNumber), 'serial positive and minimally encoded');
  const forged = forge.pki.certificateFromPem(a.certPem);
  const basic = forged.getExtension('basicConstraints') as { cA: boolean; critical: boolean };
  const usage = forged.getExtension('keyUsage') as { keyCertSign: boolean; critical: boolean };
  t.ok(basic.cA && basic.critical, 'basicConstraints critical');
  t.ok(usage.keyCertSign && usage.critical, 'keyUsage keyCertSign, critical');
  t.equal(forged.siginfo.algorithmOid, forge.pki.oids['sha256WithRSAEncryption'], 'sha256 signature');
  t.equal(cert.publicKey.asymmetricKeyDetails?.modulusLength, 2048, 'RSA-2048');
});

t.test('the leaf: signed by the CA, SANs, serverAuth, not a CA, never outlives the CA', async (t) => {
  const now = new Date('2026-01-10T12:00:00Z');
  const ca = await makeCa(now, 30);
  const leaf = await makeLeaf(ca, sans, now, 365);
  const cert = x509(leaf.certPem);
  t.notOk(cert.ca);
  t.ok(cert.checkIssued(x509(ca.certPem)) && cert.verify(x509(ca.certPem).publicKey), 'signed by the CA');
  t.same(certificateSans(cert), sans);
  t.ok(coversSans(cert, sans));
  t.equal(cert.checkHost('hook.ops.svc', { subject: 'never' }), 'hook.ops.svc');
  t.same(cert.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'extended key usage serverAuth only');
  t.equal(cert.validTo, x509(ca.certPem).validTo, 'capped at the CA NotAfter');
  const forged = forge.pki.certificateFromPem(leaf.certPem);
  const usage = forged.getExtension('keyUsage') as { digitalSignature: boolean; keyEncipherment: boolean; keyCertSign?: boolean };
  t.ok(usage.digitalSignature && usage.keyEncipherment && !usage.keyCertSign, 'digitalSignature + keyEncipherment');
  const shortLeaf = x509((await makeLeaf(ca, sans, now, 7)).certPem);
  t.equal(new Date(shortLeaf.validTo).getTime(), now.getTime() + 7 * DAY_MS, 'the requested validity when the CA lives longer');
});

t.test("the certificates are the bytes forge's own signing writes (node:crypto signs, deterministic PKCS#1 v1.5)", async (t) => {
  const ca = await makeCa();
  const leaf = await makeLeaf(ca, sans);
  // Re-sign each with forge, as the issuer did before node:crypto signed: same fields, same key.
  for (const [name, certPem, signerKeyPem] of [['CA', ca.certPem, ca.keyPem], ['leaf', leaf.certPem, ca.keyPem]] as const) {
    const cert = forge.pki.certificateFromPem(certPem);
    cert.sign(forge.pki.privateKeyFromPem(signerKeyPem), forge.md.sha256.create());
    t.equal(forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n'), certPem, `${name}: identical`);
  }
  t.ok(x509(leaf.certPem).verify(x509(ca.certPem).publicKey), 'the leaf verifies against the CA');
  // forge refused to sign with anything but RSA; so does node:crypto's signing here (no ECDSA signature under an RSA OID).
  const ecKeyPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  t.throws(() => issueLeafCertificate({ commonName: 'leaf', sans, validityDays: 90, now: new Date(), keyPem: leaf.keyPem, ca: { certPem: ca.certPem, keyPem: ecKeyPem } }), /RSA only/);
});

t.test('coversSans: IPv6 spelled either way, missing names detected', async (t) => {
  const ca = await makeCa();
  const wanted = { dnsNames: ['a.example'], ipAddresses: ['::1', '10.1.2.3'] };
  const cert = x509((await makeLeaf(ca, wanted)).certPem);
  t.ok(coversSans(cert, { dnsNames: ['A.example'], ipAddresses: ['0:0:0:0:0:0:0:1'] }));
  t.notOk(coversSans(cert, { dnsNames: ['b.example'], ipAddresses: [] }));
  t.notOk(coversSans(cert, { dnsNames: [], ipAddresses: ['10.1.2.4'] }));
});

t.test('keys are RSA-2048 PKCS#8 and each call makes a new one', async (t) => {
  const [a, b] = await Promise.all([generateRsaKey(), generateRsaKey()]);
  t.match(a, /^-----BEGIN PRIVATE KEY-----/);
  t.not(a, b);
});
