/**
 * The verdict: what the scanner and the probes saw, held against the policy (TLS 1.2/1.3 only,
 * forward-secret AEAD suites only, no renegotiation, no compression, no heartbleed, a strong key
 * and signature). A check without evidence is a problem too, so a broken scan cannot pass.
 */
import type { HelloProbeResult } from './hello-probe.js';
import type { RenegotiationResult } from './renegotiation-probe.js';
import type { SslscanCertificate, SslscanCipher, SslscanReport } from './sslscan.js';

export type CheckName = 'protocol' | 'cipher' | 'renegotiation' | 'compression' | 'heartbleed' | 'key' | 'signature' | 'scan' | 'testssl';

export interface Problem {
  check: CheckName;
  subject: string;
  detail: string;
}

export interface Evidence {
  sslscan: SslscanReport;
  hello: HelloProbeResult;
  renegotiation: RenegotiationResult;
}

export const ALLOWED_PROTOCOLS = ['TLSv1.2', 'TLSv1.3'];
const SCANNED_PROTOCOLS = ['SSLv2', 'SSLv3', 'TLSv1.0', 'TLSv1.1', ...ALLOWED_PROTOCOLS];
const TLS13_AEAD_SUITES = new Set(['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']);
const ECDHE_AEAD_SUITE = /^ECDHE-(RSA|ECDSA)-(AES(128|256)-GCM-SHA(256|384)|CHACHA20-POLY1305)$/;
const STRONG_SIGNATURE = /^(sha(256|384|512)WithRSAEncryption|ecdsa-with-SHA(256|384|512)|rsassaPss|ED25519|ED448)$/i;
const MINIMUM_KEY_BITS: Record<string, number> = { RSA: 2048, DSA: 2048, EC: 256 };

export function isForwardSecretAead(cipher: SslscanCipher): boolean {
  return cipher.protocol === 'TLSv1.3' ? TLS13_AEAD_SUITES.has(cipher.name) : ECDHE_AEAD_SUITE.test(cipher.name);
}

/** True when sslscan saw any protocol on which renegotiation and compression exist. */
function speaksTls12OrLower(report: SslscanReport): boolean {
  return report.protocols.some((p) => p.enabled && p.name !== 'TLSv1.3');
}

function protocolProblems(report: SslscanReport): Problem[] {
  const problems: Problem[] = report.protocols
    .filter((p) => p.enabled && !ALLOWED_PROTOCOLS.includes(p.name))
    .map((p) => ({ check: 'protocol', subject: p.name, detail: `${p.name} is enabled` }));
  const reported = new Set(report.protocols.map((p) => p.name));
  const unscanned = SCANNED_PROTOCOLS.filter((name) => !reported.has(name));
  if (unscanned.length > 0) problems.push({ check: 'scan', subject: 'protocols', detail: `sslscan did not report ${unscanned.join(', ')}` });
  if (!report.protocols.some((p) => p.enabled)) problems.push({ check: 'scan', subject: 'protocols', detail: 'no protocol enabled: nothing was scanned' });
  return problems;
}

function cipherProblems(report: SslscanReport): Problem[] {
  if (report.ciphers.length === 0) return [{ check: 'scan', subject: 'ciphers', detail: 'sslscan saw no accepted cipher suite' }];
  const weak = new Map<string, string[]>();
  for (const cipher of report.ciphers.filter((c) => !isForwardSecretAead(c))) weak.set(cipher.name, [...(weak.get(cipher.name) ?? []), cipher.protocol]);
  return [...weak].map(([name, protocols]) => ({ check: 'cipher', subject: name, detail: `accepted over ${protocols.join(', ')}: not ECDHE/TLS 1.3 with AES-GCM or ChaCha20-Poly1305` }));
}

function renegotiationProblems({ sslscan, hello, renegotiation }: Evidence): Problem[] {
  const problems: Problem[] = [];
  const withoutRfc5746 = (sslscan.renegotiation?.supported === true && !sslscan.renegotiation.secure) || (renegotiation.outcome === 'accepted' && hello.outcome === 'negotiated' && !hello.secureRenegotiation);
  if (withoutRfc5746) problems.push({ check: 'renegotiation', subject: 'insecure', detail: 'renegotiation without RFC 5746 (CVE-2009-3555)' });
  if (renegotiation.outcome === 'accepted') problems.push({ check: 'renegotiation', subject: 'client-initiated', detail: 'a TLS 1.2 client renegotiated (a handshake per request: DoS)' });
  if (renegotiation.outcome === 'no-tls12' && speaksTls12OrLower(sslscan)) problems.push({ check: 'scan', subject: 'renegotiation', detail: `the probe could not connect over TLS 1.2: ${renegotiation.reason}` });
  return problems;
}

function compressionProblems({ sslscan, hello }: Evidence): Problem[] {
  if (sslscan.compression === true || (hello.outcome === 'negotiated' && hello.compression)) {
    return [{ check: 'compression', subject: 'DEFLATE', detail: 'the server compresses TLS records (CRIME)' }];
  }
  if (hello.outcome === 'refused' && speaksTls12OrLower(sslscan)) {
    return [{ check: 'scan', subject: 'compression', detail: `the probe's TLS 1.2 ClientHello was refused (alert ${hello.alert}) although TLS 1.2 or lower is enabled` }];
  }
  return [];
}

function heartbleedProblems(report: SslscanReport): Problem[] {
  if (report.heartbleed.length === 0) return [{ check: 'scan', subject: 'heartbleed', detail: 'sslscan reported no heartbleed test' }];
  return report.heartbleed.filter((h) => h.vulnerable).map((h) => ({ check: 'heartbleed', subject: h.protocol, detail: `vulnerable to heartbleed over ${h.protocol}` }));
}

function certificateProblems(certificate: SslscanCertificate | undefined): Problem[] {
  if (!certificate) return [{ check: 'scan', subject: 'certificate', detail: 'sslscan reported no certificate' }];
  const problems: Problem[] = [];
  const minimum = MINIMUM_KEY_BITS[certificate.keyType];
  if (minimum === undefined || certificate.keyBits < minimum) {
    problems.push({ check: 'key', subject: `${certificate.keyType} ${certificate.keyBits}`, detail: `the certificate key is ${certificate.keyType} ${certificate.keyBits} bits (minimum ${minimum ?? '?'} bits)` });
  }
  if (!STRONG_SIGNATURE.test(certificate.signatureAlgorithm)) {
    problems.push({ check: 'signature', subject: certificate.signatureAlgorithm, detail: `the certificate is signed with ${certificate.signatureAlgorithm}` });
  }
  return problems;
}

export function judge(evidence: Evidence): Problem[] {
  return [
    ...protocolProblems(evidence.sslscan),
    ...cipherProblems(evidence.sslscan),
    ...renegotiationProblems(evidence),
    ...compressionProblems(evidence),
    ...heartbleedProblems(evidence.sslscan),
    ...certificateProblems(evidence.sslscan.certificate),
  ];
}
