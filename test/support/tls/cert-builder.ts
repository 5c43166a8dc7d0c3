/**
 * Certificates for tests, made without any of src/: keys come from node:crypto in each encoding
 * cert-manager writes to a Secret (PKCS#1 `RSA PRIVATE KEY`, PKCS#8 `PRIVATE KEY`, SEC1
 * `EC PRIVATE KEY`), certificates are built and signed by @peculiar/x509 on node's WebCrypto.
 * Tests judge src/ against this material, so it must not share code with what it checks.
 */
import 'reflect-metadata'; // @peculiar/x509's dependency injection needs the Reflect metadata API
import * as x509 from '@peculiar/x509';
import { createPrivateKey, createPublicKey, generateKeyPair, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const generateKeyPairAsync = promisify(generateKeyPair);

/** A private key type and the PEM encoding it is written in. */
export type TestKeyType = 'rsa-pkcs1' | 'rsa-pkcs8' | 'ec-sec1' | 'ec-pkcs8';
export const TEST_KEY_TYPES: readonly TestKeyType[] = ['rsa-pkcs1', 'rsa-pkcs8', 'ec-sec1', 'ec-pkcs8'];

/** The PEM label each encoding carries, as cert-manager writes it. */
export const PEM_LABEL: Record<TestKeyType, string> = {
  'rsa-pkcs1': 'RSA PRIVATE KEY',
  'rsa-pkcs8': 'PRIVATE KEY',
  'ec-sec1': 'EC PRIVATE KEY',
  'ec-pkcs8': 'PRIVATE KEY',
};

export interface CertificateAndKey {
  certPem: string;
  keyPem: string;
}

/** RSA-2048 or EC P-256, exported in the requested encoding. */
export async function generateTestKey(type: TestKeyType): Promise<string> {
  const ec = type.startsWith('ec');
  const { privateKey } = ec
    ? await generateKeyPairAsync('ec', { namedCurve: 'prime256v1' })
    : await generateKeyPairAsync('rsa', { modulusLength: 2048 });
  const encoding = type === 'rsa-pkcs1' ? 'pkcs1' : type === 'ec-sec1' ? 'sec1' : 'pkcs8';
  return privateKey.export({ type: encoding, format: 'pem' }).toString();
}

export interface CertificateSpec {
  commonName: string;
  notBefore: Date;
  notAfter: Date;
  /** basicConstraints CA:true (pathlen 0), keyCertSign + cRLSign. Otherwise a leaf. */
  ca?: boolean;
  /** DNS names and IP addresses for the subjectAltName of a leaf. */
  hosts?: readonly string[];
  /** Extended key usage of a leaf; default server. */
  usage?: 'server' | 'client';
  /** The signing CA; absent: self-signed. */
  issuer?: CertificateAndKey;
}

const RSA_SIGNING = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
const EC_SIGNING = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

interface WebKeys {
  privateKey: webcrypto.CryptoKey;
  publicKey: webcrypto.CryptoKey;
  algorithm: typeof RSA_SIGNING | typeof EC_SIGNING;
}

/** Any PEM private key (PKCS#1, PKCS#8, SEC1) as a WebCrypto signing pair. */
async function webKeys(keyPem: string): Promise<WebKeys> {
  const key = createPrivateKey(keyPem);
  const algorithm = key.asymmetricKeyType === 'ec' ? EC_SIGNING : RSA_SIGNING;
  const pkcs8 = key.export({ type: 'pkcs8', format: 'der' });
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  return {
    privateKey: await webcrypto.subtle.importKey('pkcs8', pkcs8, algorithm, false, ['sign']),
    publicKey: await webcrypto.subtle.importKey('spki', spki, algorithm, true, ['verify']),
    algorithm,
  };
}

/** Builds and signs one certificate for the key `keyPem`. */
export async function buildCertificate(spec: CertificateSpec, keyPem: string): Promise<string> {
  const subject = await webKeys(keyPem);
  const signer = spec.issuer ? await webKeys(spec.issuer.keyPem) : subject;
  const issuerCert = spec.issuer ? new x509.X509Certificate(spec.issuer.certPem) : undefined;
  const name = `CN=${spec.commonName}`;
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(spec.ca === true, spec.ca ? 0 : undefined, true),
    new x509.KeyUsagesExtension(keyUsages(spec, subject.algorithm === RSA_SIGNING), true),
    await x509.SubjectKeyIdentifierExtension.create(subject.publicKey),
  ];
  if (issuerCert) extensions.push(await x509.AuthorityKeyIdentifierExtension.create(issuerCert));
  if (!spec.ca) {
    extensions.push(new x509.ExtendedKeyUsageExtension([spec.usage === 'client' ? x509.ExtendedKeyUsage.clientAuth : x509.ExtendedKeyUsage.serverAuth]));
    const hosts = spec.hosts ?? [];
    if (hosts.length > 0) {
      extensions.push(new x509.SubjectAlternativeNameExtension(hosts.map((host) => ({ type: isIP(host) === 0 ? 'dns' : 'ip', value: host }))));
    }
  }
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: positiveSerial(),
    subject: name,
    issuer: issuerCert?.subject ?? name,
    notBefore: spec.notBefore,
    notAfter: spec.notAfter,
    publicKey: subject.publicKey,
    signingKey: signer.privateKey,
    signingAlgorithm: signer.algorithm,
    extensions,
  });
  return `${certificate.toString('pem').replace(/\r\n/g, '\n').trim()}\n`;
}

function keyUsages(spec: CertificateSpec, rsa: boolean): x509.KeyUsageFlags {
  const { keyCertSign, cRLSign, digitalSignature, keyEncipherment } = x509.KeyUsageFlags;
  if (spec.ca) return keyCertSign | cRLSign | digitalSignature;
  // keyEncipherment only means something for RSA key exchange.
  return rsa ? digitalSignature | keyEncipherment : digitalSignature;
}

/** 128 random bits, high bit clear so the DER integer stays positive without a padding byte. */
function positiveSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x10;
  return bytes.toString('hex');
}
