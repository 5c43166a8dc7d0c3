/**
 * Issues the CA and serving certificates with node-forge (sha256), from keys made by node:crypto.
 * NotBefore lies one hour back so that clocks running slightly behind still accept a fresh
 * certificate; serials are random; a leaf never outlives the CA that signs it.
 */
import { createPrivateKey, createPublicKey, randomBytes, sign } from 'node:crypto';
import forge from 'node-forge';
import { BACKDATE_MS } from './backdate.js';
import type { SubjectAltNames } from './sans.js';

export { BACKDATE_MS };
const DAY_MS = 24 * 60 * 60 * 1000;

export interface KeyedCertificate {
  certPem: string;
  keyPem: string;
}

export interface CaRequest {
  commonName: string;
  validityDays: number;
  now: Date;
  keyPem: string;
}

export interface LeafRequest {
  commonName: string;
  sans: SubjectAltNames;
  validityDays: number;
  now: Date;
  keyPem: string;
  ca: KeyedCertificate;
}

/** A self-signed CA: basicConstraints CA (critical), keyCertSign + cRLSign (critical). */
export function issueCaCertificate(request: CaRequest): string {
  const cert = newCertificate(request.keyPem, request.now, new Date(request.now.getTime() + request.validityDays * DAY_MS));
  const subject = [{ name: 'commonName', value: request.commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  signSha256WithRsa(cert, request.keyPem);
  return toLfPem(cert);
}

/**
 * A serving certificate signed by `ca`: not a CA, digitalSignature + keyEncipherment, serverAuth,
 * the requested SANs; NotAfter is the earlier of the requested validity and the CA's NotAfter.
 */
export function issueLeafCertificate(request: LeafRequest): string {
  const caCert = forge.pki.certificateFromPem(request.ca.certPem);
  const wanted = request.now.getTime() + request.validityDays * DAY_MS;
  const cert = newCertificate(request.keyPem, request.now, new Date(Math.min(wanted, caCert.validity.notAfter.getTime())));
  cert.setSubject([{ name: 'commonName', value: request.commonName }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: altNames(request.sans) },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  signSha256WithRsa(cert, request.ca.keyPem);
  return toLfPem(cert);
}

/** forge's own step of `cert.sign`, which its type definitions leave out. */
interface ForgeTbs {
  getTBSCertificate(cert: forge.pki.Certificate): forge.asn1.Asn1;
}

/**
 * What forge's `cert.sign(privateKey, sha256)` does, with the RSA signature made by node:crypto
 * (OpenSSL) instead of forge's JavaScript big integers: 45-100 ms per certificate on a start that
 * issues two. RSASSA-PKCS1-v1_5 is deterministic, so the signature, and the certificate, are the
 * bytes forge would have written (test/tls-certificates.test.ts compares them).
 */
function signSha256WithRsa(cert: forge.pki.Certificate, keyPem: string): void {
  // forge signed with RSA keys only (privateKeyFromPem refused others); so does this.
  const key = createPrivateKey(keyPem);
  if (key.asymmetricKeyType !== 'rsa') throw new Error(`cannot sign a certificate with a ${key.asymmetricKeyType} key: RSA only`);
  cert.md = forge.md.sha256.create();
  cert.signatureOid = cert.siginfo.algorithmOid = forge.pki.oids['sha256WithRSAEncryption']!;
  cert.tbsCertificate = (forge.pki as unknown as ForgeTbs).getTBSCertificate(cert);
  const tbs = Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), 'binary');
  cert.signature = sign('sha256', tbs, key).toString('binary');
}

function newCertificate(keyPem: string, now: Date, notAfter: Date): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  const publicPem = createPublicKey(keyPem).export({ type: 'spki', format: 'pem' }).toString();
  cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
  cert.serialNumber = randomSerial();
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = notAfter;
  return cert;
}

/** 128 random bits, positive and minimally encoded (strict DER parsers such as Go's insist). */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40;
  return bytes.toString('hex');
}

function altNames(sans: SubjectAltNames): { type: number; value?: string; ip?: string }[] {
  // GeneralName tags: 2 = dNSName, 7 = iPAddress.
  return [...sans.dnsNames.map((value) => ({ type: 2, value })), ...sans.ipAddresses.map((ip) => ({ type: 7, ip }))];
}

/** forge writes CRLF line ends; everything else here (and Node) writes LF. */
function toLfPem(cert: forge.pki.Certificate): string {
  return forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n');
}
