/**
 * Decides and performs renewal of generated material, purely from the material, the clock and
 * what callers trust:
 * - the CA (ca.crt) signs the served leaf and its renewals;
 * - inside the CA's rollover window a next CA is made and published in the bundle next to it,
 *   while the leaf stays with the current CA and is renewed by it as usual;
 * - only once callers are confirmed to trust the next CA (`RenewalContext.caConfirmed`: the live
 *   webhook configurations carry it) does it become the CA, and the leaf is re-issued by it; if
 *   that never happens, the move is forced when the old CA can no longer sign a leaf that lasts
 *   until its renewal (its NotAfter minus the leaf renew-before);
 * - old CAs stay in the bundle until they expire, then are pruned;
 * - the leaf is renewed `leafRenewBeforeDays` before expiry, or when it no longer covers the SANs.
 * Every replica runs the same rules on the same Secret, so they agree on the outcome.
 */
import { createPrivateKey, type X509Certificate } from 'node:crypto';
import type { KeyGenerator } from './keys.js';
import { isIssuedBy, joinCertificates, notAfter, notBefore, parseCertificates, parseUsableCertificates } from './pem.js';
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
  /**
   * Where nothing confirms a new CA from the live configurations (--no-register): how long it is
   * published before leaves move to it. Also sizes the gap between the two renew-before windows.
   */
  caPropagationMs: number;
}

export interface RenewalContext {
  now: Date;
  /** True when callers already trust `ca` (the registered caBundle holds it): leaves may move to it. */
  caConfirmed: (ca: X509Certificate) => boolean;
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

interface KeyedCa {
  cert: X509Certificate;
  certPem: string;
  keyPem: string;
}

export async function renewMaterial(
  previous: PersistedMaterial | undefined,
  context: RenewalContext,
  policy: RenewalPolicy,
  generateKey: KeyGenerator,
): Promise<RenewalResult> {
  const reasons: string[] = [];
  const kept = usableCa(previous?.caCertPem, previous?.caKeyPem, context.now);
  const keptNext = usableCa(previous?.nextCaCertPem, previous?.nextCaKeyPem, context.now).ca;
  // A first start needs both keys: generate them side by side (node:crypto runs them on the thread pool).
  const firstLeafKey = !kept.ca && !keptNext && previous?.certPem === undefined ? generateKey() : undefined;
  const { ca, next, moved } = await chooseCas({ kept, next: keptNext }, context, policy, generateKey, reasons);
  const bundle = publishedBundle(previous, [ca.cert, ...(next ? [next.cert] : [])], context.now);
  const leaf = (await keptLeaf(previous, context, policy, { ca, bundle, moved }, reasons)) ?? (await issueLeaf(ca, context.now, policy, await (firstLeafKey ?? generateKey())));
  const material: GeneratedMaterial = {
    caCertPem: ca.certPem,
    caKeyPem: ca.keyPem,
    certPem: leaf.certPem,
    keyPem: leaf.keyPem,
    caBundlePem: joinCertificates(bundle),
    ...(next ? { nextCaCertPem: next.certPem, nextCaKeyPem: next.keyPem } : {}),
  };
  if (previous?.caBundlePem !== undefined && material.caBundlePem !== previous.caBundlePem && reasons.length === 0) {
    reasons.push('CA bundle: expired CA pruned or bundle repaired');
  }
  const parts = new Set([...Object.keys(material), ...Object.keys(previous ?? {})]) as Set<keyof GeneratedMaterial>;
  const changed = [...parts].some((part) => material[part] !== previous?.[part]);
  return { material, changed, reasons };
}

/**
 * The CA that signs, and the next one published beside it: the kept CA, the next one taking over
 * when the kept one is unusable or callers trust the next, or a new one; a next CA published
 * `caRenewBeforeDays` before the CA expires.
 */
async function chooseCas(
  held: { kept: ReturnType<typeof usableCa>; next: KeyedCa | undefined },
  context: RenewalContext,
  policy: RenewalPolicy,
  generateKey: KeyGenerator,
  reasons: string[],
): Promise<{ ca: KeyedCa; next: KeyedCa | undefined; moved: boolean }> {
  const { now } = context;
  const { kept } = held;
  let next = held.next;
  let ca: KeyedCa;
  let moved = false;
  if (kept.ca) {
    ca = kept.ca;
  } else if (next) {
    reasons.push(`CA: ${kept.reason}; the next CA takes over`);
    [ca, next, moved] = [next, undefined, true];
  } else {
    reasons.push(`new CA: ${kept.reason}`);
    ca = await newCa(now, policy, generateKey);
  }
  if (!next && now.getTime() >= notAfter(ca.cert).getTime() - policy.caRenewBeforeDays * DAY_MS) {
    reasons.push(`next CA published: the CA expires at ${notAfter(ca.cert).toISOString()}`);
    next = await newCa(now, policy, generateKey);
  }
  if (next && context.caConfirmed(next.cert)) {
    reasons.push('CA: callers trust the next CA; it takes over');
    [ca, next, moved] = [next, undefined, true];
  } else if (next && now.getTime() >= notAfter(ca.cert).getTime() - policy.leafRenewBeforeDays * DAY_MS) {
    reasons.push(`CA: the next CA was never confirmed, and the CA can no longer sign a leaf that lasts (it expires at ${notAfter(ca.cert).toISOString()}); moving anyway`);
    [ca, next, moved] = [next, undefined, true];
  }
  return { ca, next, moved };
}

/** The serving certificate kept, or undefined when a new one is due (with the reason pushed). */
async function keptLeaf(
  previous: PersistedMaterial | undefined,
  context: RenewalContext,
  policy: RenewalPolicy,
  signer: { ca: KeyedCa; bundle: readonly X509Certificate[]; moved: boolean },
  reasons: string[],
): Promise<{ certPem: string; keyPem: string } | undefined> {
  const kept = usableLeaf(previous, context.now, policy, signer.bundle);
  if (!kept.ok) {
    reasons.push(`new serving certificate: ${kept.reason}`);
    return undefined;
  }
  if (!isIssuedBy(kept.cert, signer.ca.cert) && (signer.moved || context.caConfirmed(signer.ca.cert))) {
    reasons.push('new serving certificate: moving to the CA');
    return undefined;
  }
  return { certPem: previous!.certPem!, keyPem: previous!.keyPem! };
}

async function issueLeaf(ca: KeyedCa, now: Date, policy: RenewalPolicy, keyPem: string): Promise<{ certPem: string; keyPem: string }> {
  const { issueLeafCertificate } = await certificates();
  const certPem = issueLeafCertificate({ commonName: policy.leafCommonName, sans: policy.sans, validityDays: policy.leafValidityDays, now, keyPem, ca });
  return { certPem, keyPem };
}

/**
 * The issuing code, loaded when something is issued: node-forge's loading is ~5 ms of CPU that a
 * start finding its CA and serving certificate in the Secret (every start but an install's first
 * and a renewal) does not need.
 */
const certificates = (): Promise<typeof import('./certificates.js')> => import('./certificates.js');

async function newCa(now: Date, policy: RenewalPolicy, generateKey: KeyGenerator): Promise<KeyedCa> {
  const keyPem = await generateKey();
  const { issueCaCertificate } = await certificates();
  const certPem = issueCaCertificate({ commonName: policy.caCommonName, validityDays: policy.caValidityDays, now, keyPem });
  return { cert: parseCertificates(certPem)[0]!, certPem, keyPem };
}

type Usable = { ok: true; cert: X509Certificate } | { ok: false; reason: string };

/** A CA certificate with its key, in its validity; `reason` says why not. */
function usableCa(certPem: string | undefined, keyPem: string | undefined, now: Date): { ca: KeyedCa; reason?: undefined } | { ca?: undefined; reason: string } {
  if (!certPem || !keyPem) return { reason: 'none persisted' };
  const cert = firstCertificate(certPem);
  if (!cert || !cert.ca) return { reason: 'persisted CA certificate is not a valid CA' };
  if (!keyMatches(cert, keyPem)) return { reason: 'persisted CA key does not match its certificate' };
  if (now < notBefore(cert)) return { reason: `persisted CA not valid before ${notBefore(cert).toISOString()}` };
  if (now >= notAfter(cert)) return { reason: `persisted CA expired at ${notAfter(cert).toISOString()}` };
  return { ca: { cert, certPem, keyPem } };
}

function usableLeaf(previous: PersistedMaterial | undefined, now: Date, policy: RenewalPolicy, bundle: readonly X509Certificate[]): Usable {
  if (!previous?.certPem || !previous.keyPem) return { ok: false, reason: 'none persisted' };
  const certs = parseUsableCertificates(previous.certPem);
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

/** The previous bundle minus expired or non-CA certificates, plus the current CAs; oldest first. */
function publishedBundle(previous: PersistedMaterial | undefined, currentCas: readonly X509Certificate[], now: Date): X509Certificate[] {
  const candidates = [...parseUsableCertificates(previous?.caBundlePem ?? ''), ...parseUsableCertificates(previous?.caCertPem ?? ''), ...currentCas];
  const byFingerprint = new Map<string, X509Certificate>();
  for (const cert of candidates) {
    if (cert.ca && now < notAfter(cert)) byFingerprint.set(cert.fingerprint256, cert);
  }
  return [...byFingerprint.values()].sort((a, b) => notBefore(a).getTime() - notBefore(b).getTime());
}

function firstCertificate(pem: string): X509Certificate | undefined {
  return parseUsableCertificates(pem)[0];
}

function keyMatches(cert: X509Certificate, keyPem: string): boolean {
  try {
    return cert.checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}
