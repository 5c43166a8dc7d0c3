/**
 * The caBundle to register when the CAs in force change: the current CAs plus those registered
 * before that are still valid and left the current set less than `overlapMs` ago. Replicas load a
 * new ca.crt at different moments (kubelet updates each pod's volume on its own schedule), so for
 * a while some still serve a chain of the old CA: the registered bundle must keep trusting it.
 * Pure: the previous state comes in (read back from the live configuration), the next goes out.
 */
import { joinCertificates, notAfter, notBefore, parseUsableCertificates } from './pem.js';

/** At most this many retired CAs are kept, newest retirements first: a ca.crt that changes every minute must not grow the bundle without bound. */
export const MAX_RETIRED_CAS = 8;

export interface CaOverlapInput {
  /** The CAs in force now (ca.crt, or the generated bundle). */
  currentPem: string;
  /** What the live configuration trusts now (every webhook's caBundle, concatenated). */
  registeredPem: string;
  /** SHA-256 fingerprint -> when that CA left the current set (ISO 8601), as recorded before. */
  retiredAt: Readonly<Record<string, string>>;
  now: Date;
  overlapMs: number;
}

export interface CaOverlap {
  /** Current and retained CAs, oldest NotBefore first (one order for every replica: no flapping). */
  bundlePem: string;
  /** The retained CAs and when each left the current set; record it for the next computation. */
  retiredAt: Record<string, string>;
  /** When the next retained CA drops out (end of its overlap or its expiry); undefined when none is retained. */
  nextPruneAt: Date | undefined;
}

export function overlapBundle(input: CaOverlapInput): CaOverlap {
  const { now, overlapMs } = input;
  const current = parseUsableCertificates(input.currentPem);
  const currentFingerprints = new Set(current.map((cert) => cert.fingerprint256));
  const seen = new Set<string>();
  const retired = parseUsableCertificates(input.registeredPem)
    .filter((cert) => !currentFingerprints.has(cert.fingerprint256) && !seen.has(cert.fingerprint256) && seen.add(cert.fingerprint256))
    .map((cert) => ({ cert, since: earlier(recordedTime(input.retiredAt[cert.fingerprint256]) ?? now, now) }))
    .map((entry) => ({ ...entry, until: new Date(Math.min(entry.since.getTime() + overlapMs, notAfter(entry.cert).getTime())) }))
    .filter((entry) => now < entry.until)
    .sort((a, b) => b.since.getTime() - a.since.getTime() || a.cert.fingerprint256.localeCompare(b.cert.fingerprint256))
    .slice(0, MAX_RETIRED_CAS);
  const bundle = [...current, ...retired.map((entry) => entry.cert)].sort(
    (a, b) => notBefore(a).getTime() - notBefore(b).getTime() || a.fingerprint256.localeCompare(b.fingerprint256),
  );
  const prunes = retired.map((entry) => entry.until.getTime());
  return {
    bundlePem: joinCertificates(bundle),
    retiredAt: Object.fromEntries(retired.map((entry) => [entry.cert.fingerprint256, entry.since.toISOString()])),
    nextPruneAt: prunes.length > 0 ? new Date(Math.min(...prunes)) : undefined,
  };
}

/** A time recorded by a leader whose clock ran ahead must not stretch the overlap. */
function earlier(a: Date, b: Date): Date {
  return a < b ? a : b;
}

function recordedTime(text: string | undefined): Date | undefined {
  const date = text === undefined ? undefined : new Date(text);
  return date && !Number.isNaN(date.getTime()) ? date : undefined;
}
