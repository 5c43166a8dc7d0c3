/**
 * Issues the CA and serving certificates with node-forge (sha256), from keys made by node:crypto.
 * NotBefore lies one hour back so that clocks running slightly behind still accept a fresh
 * certificate; serials are random; a leaf never outlives the CA that signs it.
 */
import { createPublicKey, randomBytes } from 'node:crypto';
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
  cert.sign(forge.pki.privateKeyFromPem(request.keyPem), forge.md.sha256.create());
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
  cert.sign(forge.pki.privateKeyFromPem(request.ca.keyPem), forge.md.sha256.create());
  return toLfPem(cert);
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
