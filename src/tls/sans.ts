/** The names a serving certificate must carry, and whether a certificate carries them. */
import { isIP } from 'node:net';
import type { X509Certificate } from 'node:crypto';

export interface SubjectAltNames {
  dnsNames: string[];
  ipAddresses: string[];
}

export interface ServingNameOptions {
  serviceName: string;
  namespace: string;
  /** Running outside a cluster: add localhost and 127.0.0.1. */
  local: boolean;
  extraSans: readonly string[];
}

/** The name kube-apiserver verifies when it calls the webhook service. */
export function serviceHostName(serviceName: string, namespace: string): string {
  return `${serviceName}.${namespace}.svc`;
}

export function servingSans(options: ServingNameOptions): SubjectAltNames {
  const { serviceName: svc, namespace: ns } = options;
  const requested = [svc, `${svc}.${ns}`, `${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`];
  if (options.local) requested.push('localhost', '127.0.0.1');
  requested.push(...options.extraSans);
  const unique = [...new Set(requested.map((name) => name.trim()).filter((name) => name !== ''))];
  return {
    dnsNames: unique.filter((name) => isIP(name) === 0),
    ipAddresses: unique.filter((name) => isIP(name) !== 0),
  };
}

/** The DNS names and IP addresses in a certificate's subjectAltName extension. */
export function certificateSans(certificate: X509Certificate): SubjectAltNames {
  const entries = (certificate.subjectAltName ?? '').split(/,\s*/).filter((entry) => entry !== '');
  const valueOf = (prefix: string): string[] =>
    entries.filter((entry) => entry.startsWith(prefix)).map((entry) => entry.slice(prefix.length).replace(/^"|"$/g, ''));
  return { dnsNames: valueOf('DNS:'), ipAddresses: valueOf('IP Address:') };
}

/** True when every wanted name appears literally in the certificate (no wildcard matching: we issue exact names). */
export function coversSans(certificate: X509Certificate, wanted: SubjectAltNames): boolean {
  const present = certificateSans(certificate);
  const dns = new Set(present.dnsNames.map((name) => name.toLowerCase()));
  const ips = new Set(present.ipAddresses.map(canonicalIp));
  return (
    wanted.dnsNames.every((name) => dns.has(name.toLowerCase())) &&
    wanted.ipAddresses.every((ip) => ips.has(canonicalIp(ip)))
  );
}

/** One spelling per address: OpenSSL prints IPv6 uncompressed, users write it compressed. */
function canonicalIp(ip: string): string {
  return isIP(ip) === 6 ? new URL(`http://[${ip}]/`).hostname : ip;
}
