/** PEM certificate bundles: split, parse, join. */
import { X509Certificate } from 'node:crypto';

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificate blocks of a PEM text, each normalised to end with one newline. */
export function splitCertificatePem(pem: string): string[] {
  return (pem.match(CERTIFICATE_BLOCK) ?? []).map((block) => `${block.replace(/\r\n/g, '\n').trim()}\n`);
}

/** Parses every certificate of a PEM bundle; throws on the first block that does not parse. */
export function parseCertificates(pem: string): X509Certificate[] {
  return splitCertificatePem(pem).map((block) => new X509Certificate(block));
}

/** Parses each block on its own, dropping those that do not parse (bundles read back from elsewhere). */
export function parseUsableCertificates(pem: string): X509Certificate[] {
  return splitCertificatePem(pem).flatMap((block) => {
    try {
      return [new X509Certificate(block)];
    } catch {
      return [];
    }
  });
}

/** One PEM text from certificates, in the given order. */
export function joinCertificates(certificates: readonly X509Certificate[]): string {
  return certificates.map((certificate) => `${certificate.toString().trim()}\n`).join('');
}

export function notAfter(certificate: X509Certificate): Date {
  return new Date(certificate.validTo);
}

export function notBefore(certificate: X509Certificate): Date {
  return new Date(certificate.validFrom);
}

/** True when `issuer` issued and signed `certificate`. */
export function isIssuedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
}
