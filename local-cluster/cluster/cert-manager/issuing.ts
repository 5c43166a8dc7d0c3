/**
 * What cert-manager's selfSigned and CA issuers sign, for a Certificate's spec: RSA keys from
 * node:crypto, certificates signed with node-forge, PEM out (the key as PKCS#1, cert-manager's
 * default encoding for RSA).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { isRecord } from '../../fake-apiserver/index.js';

type Json = Record<string, unknown>;

export interface Issued {
  certPem: string;
  keyPem: string;
  notBefore: Date;
  notAfter: Date;
}

export interface Signer {
  certPem: string;
  keyPem: string;
}

/** Go durations as cert-manager takes them: `2160h`, `90m`, `1h30m`. */
export function parseGoDuration(text: string | undefined, fallbackMs: number): number {
  if (!text) return fallbackMs;
  let total = 0;
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  const parts = text.match(/(\d+(?:\.\d+)?)(ms|h|m|s)/g);
  if (!parts) return fallbackMs;
  for (const part of parts) {
    const m = /^(\d+(?:\.\d+)?)(ms|h|m|s)$/.exec(part);
    if (m) total += Number(m[1]) * (units[m[2] ?? 's'] ?? 1000);
  }
  return total;
}

const DEFAULT_DURATION_MS = 90 * 24 * 3_600_000;

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

function newKey(spec: Json): { keyPem: string; publicKey: forge.pki.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const privateKeySpec = isRecord(spec.privateKey) ? spec.privateKey : {};
  const size = typeof privateKeySpec.size === 'number' ? privateKeySpec.size : 2048;
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: size,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { keyPem: privateKey, publicKey: forge.pki.publicKeyFromPem(publicKey), privateKey: forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey };
}

function extensions(spec: Json): Record<string, unknown>[] {
  const isCa = spec.isCA === true;
  const usages = Array.isArray(spec.usages) ? spec.usages.map(String) : ['digital signature', 'key encipherment'];
  const dnsNames = Array.isArray(spec.dnsNames) ? spec.dnsNames.map(String) : [];
  const ips = Array.isArray(spec.ipAddresses) ? spec.ipAddresses.map(String) : [];
  const result: Record<string, unknown>[] = [
    { name: 'basicConstraints', cA: isCa, critical: true },
    {
      name: 'keyUsage',
      critical: true,
      digitalSignature: usages.includes('digital signature') || isCa,
      keyEncipherment: usages.includes('key encipherment'),
      keyCertSign: isCa || usages.includes('cert sign'),
    },
    { name: 'subjectKeyIdentifier' },
  ];
  const ext: Record<string, boolean> = {};
  if (usages.includes('server auth')) ext.serverAuth = true;
  if (usages.includes('client auth')) ext.clientAuth = true;
  if (Object.keys(ext).length > 0) result.push({ name: 'extKeyUsage', ...ext });
  if (dnsNames.length + ips.length > 0) {
    result.push({ name: 'subjectAltName', altNames: [...dnsNames.map((value) => ({ type: 2, value })), ...ips.map((ip) => ({ type: 7, ip }))] });
  }
  return result;
}

/** Issues the certificate the spec describes: self-signed without a signer, else signed by it. */
export function issue(spec: Json, signer: Signer | undefined, now = new Date()): Issued {
  const key = newKey(spec);
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = now;
  cert.validity.notAfter = new Date(now.getTime() + parseGoDuration(typeof spec.duration === 'string' ? spec.duration : undefined, DEFAULT_DURATION_MS));
  const subject = typeof spec.commonName === 'string' ? [{ name: 'commonName', value: spec.commonName }] : [];
  cert.setSubject(subject);
  const signerCert = signer ? forge.pki.certificateFromPem(signer.certPem) : undefined;
  cert.setIssuer(signerCert ? signerCert.subject.attributes : subject);
  // As Go's x509.CreateCertificate does for cert-manager: a signed certificate names its issuer's
  // key (authorityKeyIdentifier). Without it a verifier that meets two CAs of one name (a CA
  // re-made with a new key, both in the bundle for the overlap) may try the wrong one: OpenSSL does.
  const authority = signerCert ? [{ name: 'authorityKeyIdentifier', keyIdentifier: signerCert.generateSubjectKeyIdentifier().getBytes() }] : [];
  cert.setExtensions([...extensions(spec), ...authority]);
  const signingKey = signer ? (forge.pki.privateKeyFromPem(signer.keyPem) as forge.pki.rsa.PrivateKey) : key.privateKey;
  cert.sign(signingKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.keyPem, notBefore: cert.validity.notBefore, notAfter: cert.validity.notAfter };
}
