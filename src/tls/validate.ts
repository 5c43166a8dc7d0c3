/**
 * Checks serving material before it is used: every problem is reported, each naming its file,
 * so a bad mount is fixed in one round.
 */
import { createPrivateKey, type KeyObject, type X509Certificate } from 'node:crypto';
import { isIssuedBy, notAfter, notBefore, parseCertificates, splitCertificatePem } from './pem.js';
import type { ServingMaterial } from './types.js';

export interface ServingTexts {
  certPem: string | undefined;
  keyPem: string | undefined;
  caPem: string | undefined;
}

/** How the files are named in problems (paths, or Secret keys). */
export interface ServingFileNames {
  cert: string;
  key: string;
  ca: string;
}

export interface ServingValidationOptions {
  /** The name clients verify, `<service>.<namespace>.svc`. */
  hostName: string;
  now: Date;
  names: ServingFileNames;
}

export type ServingValidation =
  | { ok: true; material: ServingMaterial }
  /** `validFrom`: the material is not valid yet (NotBefore ahead of this clock) and may be from then on. */
  | { ok: false; problems: string[]; validFrom?: Date };

export function validateServingMaterial(texts: ServingTexts, options: ServingValidationOptions): ServingValidation {
  const problems: string[] = [];
  const { names } = options;
  const certs = parsePem(texts.certPem, names.cert, problems);
  const key = parseKey(texts.keyPem, names.key, problems);
  const cas = parsePem(texts.caPem, names.ca, problems);
  const leaf = certs?.[0];
  if (leaf && key && !leaf.checkPrivateKey(key)) problems.push(`${names.key}: does not match the certificate in ${names.cert}`);
  if (leaf) problems.push(...validityProblems(leaf, names.cert, options.now));
  if (leaf && leaf.checkHost(options.hostName, { subject: 'never' }) === undefined) {
    problems.push(`${names.cert}: subjectAltName does not cover ${options.hostName} (it has: ${leaf.subjectAltName ?? 'none'})`);
  }
  const root = leaf && certs && cas ? chainRoot(leaf, certs.slice(1), cas) : undefined;
  if (leaf && cas && !root) problems.push(`${names.cert}: does not chain to a CA in ${names.ca} (issuer: ${leaf.issuer.replace(/\n/g, ', ')})`);
  if (root) problems.push(...validityProblems(root, `${names.ca}: the CA that signed ${names.cert}`, options.now));
  if (problems.length > 0 || !leaf || !root || !texts.certPem || !texts.keyPem || !cas) {
    const validFrom = latestFutureNotBefore([leaf, root], options.now);
    return { ok: false, problems, ...(validFrom ? { validFrom } : {}) };
  }
  return {
    ok: true,
    material: {
      certPem: splitCertificatePem(texts.certPem).join(''),
      keyPem: texts.keyPem,
      caBundlePem: cas.map((ca) => `${ca.toString().trim()}\n`).join(''),
      certNotAfter: notAfter(leaf),
      caNotAfter: notAfter(root),
    },
  };
}

/** Parses one or more PEM certificates, recording a problem instead of throwing. */
export function parsePem(text: string | undefined, name: string, problems: string[]): X509Certificate[] | undefined {
  if (text === undefined) {
    problems.push(`${name}: missing or unreadable`);
    return undefined;
  }
  try {
    const certs = parseCertificates(text);
    if (certs.length > 0) return certs;
    problems.push(`${name}: no PEM certificate found`);
  } catch (error) {
    problems.push(`${name}: not a valid certificate (${(error as Error).message})`);
  }
  return undefined;
}

function parseKey(text: string | undefined, name: string, problems: string[]): KeyObject | undefined {
  if (text === undefined) {
    problems.push(`${name}: missing or unreadable`);
    return undefined;
  }
  try {
    return createPrivateKey(text);
  } catch {
    // The parser's message may quote key bytes: say what is wrong without it.
    problems.push(`${name}: not a valid unencrypted PEM private key`);
    return undefined;
  }
}

function validityProblems(cert: X509Certificate, label: string, now: Date): string[] {
  if (now < notBefore(cert)) return [`${label}: not valid before ${notBefore(cert).toISOString()} (now ${now.toISOString()})`];
  if (now >= notAfter(cert)) return [`${label}: expired at ${notAfter(cert).toISOString()}`];
  return [];
}

function latestFutureNotBefore(certs: readonly (X509Certificate | undefined)[], now: Date): Date | undefined {
  const ahead = certs.filter((cert): cert is X509Certificate => cert !== undefined).map(notBefore).filter((date) => date > now);
  return ahead.length === 0 ? undefined : new Date(Math.max(...ahead.map((date) => date.getTime())));
}

/** The CA from `roots` that the chain leaf -> intermediates ends in, if any. */
export function chainRoot(
  leaf: X509Certificate,
  intermediates: readonly X509Certificate[],
  roots: readonly X509Certificate[],
): X509Certificate | undefined {
  let current = leaf;
  for (let depth = 0; depth <= intermediates.length; depth++) {
    const root = roots.find((candidate) => isIssuedBy(current, candidate));
    if (root) return root;
    const next = intermediates.find((candidate) => candidate !== current && isIssuedBy(current, candidate));
    if (!next) return undefined;
    current = next;
  }
  return undefined;
}
