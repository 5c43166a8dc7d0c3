/**
 * Decides and performs renewal of generated material, purely from the material and the clock:
 * - the CA is replaced when missing, broken, or inside its rollover window; the new CA joins the
 *   published bundle at once, while the served leaf (signed by the old CA) stays;
 * - only after the new CA has been published for `caPropagationMs` (time for every replica and
 *   the registered caBundle to pick it up) is the leaf re-issued by it;
 * - the old CA stays in the bundle until it expires, then is pruned;
 * - the leaf is renewed `leafRenewBeforeDays` before expiry, or when it no longer covers the SANs.
 * Every replica runs the same rules on the same Secret, so they agree on the outcome.
 */
import { createPrivateKey, type X509Certificate } from 'node:crypto';
import { BACKDATE_MS, issueCaCertificate, issueLeafCertificate } from './certificates.js';
import type { KeyGenerator } from './keys.js';
import { isIssuedBy, joinCertificates, notAfter, notBefore, parseCertificates, splitCertificatePem } from './pem.js';
import { coversSans, type SubjectAltNames } from './sans.js';
import type { GeneratedMaterial, PersistedMaterial } from './generated-material.js';
import { chainRoot } from './validate.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RenewalPolicy {
  sans: SubjectAltNames;
  leafCommonName: string;
  caCommonName: string;
  caValidityDays: number;
  leafValidityDays: number;
  leafRenewBeforeDays: number;
  caRenewBeforeDays: number;
  /** How long a new CA is published in the bundle before a leaf signed by it is served. */
  caPropagationMs: number;
}

export interface RenewalResult {
  material: GeneratedMaterial;
  /** True when `material` differs from what was passed in. */
  changed: boolean;
  /** Why things changed, for the log (never key material). */
  reasons: string[];
}

/** Problems with a policy that would make renewal thrash or leaves outlive their CA. */
export function renewalPolicyProblems(policy: RenewalPolicy): string[] {
  const problems: string[] = [];
  if (!(policy.leafRenewBeforeDays > 0 && policy.leafRenewBeforeDays < policy.leafValidityDays)) {
    problems.push(`leaf renew-before (${policy.leafRenewBeforeDays} days) must be above 0 and below the leaf validity (${policy.leafValidityDays} days)`);
  }
  if (!(policy.caRenewBeforeDays > 0 && policy.caRenewBeforeDays < policy.caValidityDays)) {
    problems.push(`CA renew-before (${policy.caRenewBeforeDays} days) must be above 0 and below the CA validity (${policy.caValidityDays} days)`);
  }
  // A leaf capped at its CA's NotAfter must find the next CA already published when it is due.
  const overlapMs = (policy.caRenewBeforeDays - policy.leafRenewBeforeDays) * DAY_MS;
  if (!(overlapMs > policy.caPropagationMs)) {
    problems.push(
      `CA renew-before (${policy.caRenewBeforeDays} days) must exceed leaf renew-before (${policy.leafRenewBeforeDays} days) by more than the CA propagation time (${policy.caPropagationMs} ms)`,
    );
  }
  return problems;
}

export async function renewMaterial(
  previous: PersistedMaterial | undefined,
  now: Date,
  policy: RenewalPolicy,
  generateKey: KeyGenerator,
): Promise<RenewalResult> {
  const reasons: string[] = [];
  const keptCa = usableCa(previous, now, policy);
  // A first start needs both keys: generate them side by side (node:crypto runs them on the thread pool).
  const firstLeafKey = !keptCa.ok && previous?.certPem === undefined ? generateKey() : undefined;
  let ca: { cert: X509Certificate; certPem: string; keyPem: string; publishedAt: Date };
  if (keptCa.ok) {
    ca = { cert: keptCa.cert, certPem: keptCa.certPem, keyPem: keptCa.keyPem, publishedAt: new Date(notBefore(keptCa.cert).getTime() + BACKDATE_MS) };
  } else {
    reasons.push(`new CA: ${keptCa.reason}`);
    const keyPem = await generateKey();
    const certPem = issueCaCertificate({ commonName: policy.caCommonName, validityDays: policy.caValidityDays, now, keyPem });
    ca = { cert: parseCertificates(certPem)[0]!, certPem, keyPem, publishedAt: now };
  }

  const bundle = publishedBundle(previous, ca.cert, now);
  const keptLeaf = usableLeaf(previous, now, policy, bundle);
  const caPropagated = now.getTime() - ca.publishedAt.getTime() >= policy.caPropagationMs;
  let leaf = keptLeaf.ok ? { certPem: previous!.certPem!, keyPem: previous!.keyPem! } : undefined;
  if (!keptLeaf.ok) reasons.push(`new serving certificate: ${keptLeaf.reason}`);
  else if (!isIssuedBy(keptLeaf.cert, ca.cert) && caPropagated) {
    reasons.push('new serving certificate: the current CA has been published long enough to move to it');
    leaf = undefined;
  }
  if (!leaf) {
    const keyPem = await (firstLeafKey ?? generateKey());
    const certPem = issueLeafCertificate({
      commonName: policy.leafCommonName,
      sans: policy.sans,
      validityDays: policy.leafValidityDays,
      now,
      keyPem,
      ca,
    });
    leaf = { certPem, keyPem };
  }

  const material: GeneratedMaterial = {
    caCertPem: ca.certPem,
    caKeyPem: ca.keyPem,
    certPem: leaf.certPem,
    keyPem: leaf.keyPem,
    caBundlePem: joinCertificates(bundle),
  };
  if (previous?.caBundlePem !== undefined && material.caBundlePem !== previous.caBundlePem && keptCa.ok) {
    reasons.push('CA bundle: expired CA pruned or bundle repaired');
  }
  const changed = (Object.keys(material) as (keyof GeneratedMaterial)[]).some((part) => material[part] !== previous?.[part]);
  return { material, changed, reasons };
}

type Usable = { ok: true; cert: X509Certificate } | { ok: false; reason: string };

type UsableCa = { ok: true; cert: X509Certificate; certPem: string; keyPem: string } | { ok: false; reason: string };

function usableCa(previous: PersistedMaterial | undefined, now: Date, policy: RenewalPolicy): UsableCa {
  if (!previous?.caCertPem || !previous.caKeyPem) return { ok: false, reason: 'none persisted' };
  const cert = firstCertificate(previous.caCertPem);
  if (!cert || !cert.ca) return { ok: false, reason: 'persisted CA certificate is not a valid CA' };
  if (!keyMatches(cert, previous.caKeyPem)) return { ok: false, reason: 'persisted CA key does not match its certificate' };
  if (now < notBefore(cert)) return { ok: false, reason: `persisted CA not valid before ${notBefore(cert).toISOString()}` };
  const rollAt = notAfter(cert).getTime() - policy.caRenewBeforeDays * DAY_MS;
  if (now.getTime() >= rollAt) return { ok: false, reason: `CA expires at ${notAfter(cert).toISOString()}, rolling over` };
  return { ok: true, cert, certPem: previous.caCertPem, keyPem: previous.caKeyPem };
}

function usableLeaf(previous: PersistedMaterial | undefined, now: Date, policy: RenewalPolicy, bundle: X509Certificate[]): Usable {
  if (!previous?.certPem || !previous.keyPem) return { ok: false, reason: 'none persisted' };
  const certs = safeParse(previous.certPem);
  const cert = certs[0];
  if (!cert) return { ok: false, reason: 'persisted certificate does not parse' };
  if (!keyMatches(cert, previous.keyPem)) return { ok: false, reason: 'persisted key does not match its certificate' };
  if (now < notBefore(cert)) return { ok: false, reason: `not valid before ${notBefore(cert).toISOString()}` };
  const renewAt = notAfter(cert).getTime() - policy.leafRenewBeforeDays * DAY_MS;
  if (now.getTime() >= renewAt) return { ok: false, reason: `expires at ${notAfter(cert).toISOString()}, renewing` };
  if (!coversSans(cert, policy.sans)) return { ok: false, reason: 'subjectAltName does not cover the requested names' };
  if (!chainRoot(cert, certs.slice(1), bundle)) return { ok: false, reason: 'its CA is not in the published bundle' };
  return { ok: true, cert };
}

/** The previous bundle minus expired or non-CA certificates, plus the current CA; oldest first. */
function publishedBundle(previous: PersistedMaterial | undefined, currentCa: X509Certificate, now: Date): X509Certificate[] {
  const candidates = [...safeParse(previous?.caBundlePem ?? ''), ...safeParse(previous?.caCertPem ?? ''), currentCa];
  const byFingerprint = new Map<string, X509Certificate>();
  for (const cert of candidates) {
    if (cert.ca && now < notAfter(cert)) byFingerprint.set(cert.fingerprint256, cert);
  }
  return [...byFingerprint.values()].sort((a, b) => notBefore(a).getTime() - notBefore(b).getTime());
}

/** Parses each block on its own, dropping those that do not parse. */
function safeParse(pem: string): X509Certificate[] {
  return splitCertificatePem(pem).flatMap((block) => {
    try {
      return parseCertificates(block);
    } catch {
      return [];
    }
  });
}

function firstCertificate(pem: string): X509Certificate | undefined {
  return safeParse(pem)[0];
}

function keyMatches(cert: X509Certificate, keyPem: string): boolean {
  try {
    return cert.checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}
