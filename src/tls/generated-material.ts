/**
 * The persisted form of generated material (the Secret's keys, or the files of --cert-dir), and
 * how it maps to what the server serves.
 */
import { chainRoot } from './validate.js';
import { notAfter, parseCertificates } from './pem.js';
import type { ServingMaterial } from './types.js';

export interface GeneratedMaterial {
  /** The CA that signs the served leaf and its renewals (ca.crt / ca.key). */
  caCertPem: string;
  caKeyPem: string;
  /** The served leaf (tls.crt / tls.key), signed by the CA above. */
  certPem: string;
  keyPem: string;
  /** The published bundle (ca-bundle.crt): the CA, the next one during a rollover, older ones until they expire. */
  caBundlePem: string;
  /**
   * During a CA rollover, the new CA (next-ca.crt / next-ca.key): already in the bundle, it signs
   * leaves only once callers trust it (see renewal.ts).
   */
  nextCaCertPem?: string;
  nextCaKeyPem?: string;
}

/** Whatever was found persisted: any part may be missing or damaged. */
export type PersistedMaterial = Partial<GeneratedMaterial>;

/** The file / Secret key for each part. */
export const MATERIAL_KEYS = {
  caCertPem: 'ca.crt',
  caKeyPem: 'ca.key',
  certPem: 'tls.crt',
  keyPem: 'tls.key',
  caBundlePem: 'ca-bundle.crt',
  nextCaCertPem: 'next-ca.crt',
  nextCaKeyPem: 'next-ca.key',
} as const satisfies Record<keyof GeneratedMaterial, string>;

export const PRIVATE_KEY_PARTS: readonly (keyof GeneratedMaterial)[] = ['caKeyPem', 'keyPem', 'nextCaKeyPem'];

/** Key/file name -> text, for writing; parts the material does not have are left out. */
export function materialToEntries(material: GeneratedMaterial): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const part of Object.keys(MATERIAL_KEYS) as (keyof GeneratedMaterial)[]) {
    const text = material[part];
    if (text !== undefined) entries[MATERIAL_KEYS[part]] = text;
  }
  return entries;
}

/** Key/file name -> text, back to the (possibly partial) material. */
export function entriesToMaterial(entries: Record<string, string | undefined>): PersistedMaterial {
  const material: PersistedMaterial = {};
  for (const part of Object.keys(MATERIAL_KEYS) as (keyof GeneratedMaterial)[]) {
    const text = entries[MATERIAL_KEYS[part]];
    if (text !== undefined && text !== '') material[part] = text;
  }
  return material;
}

/** What the server serves from complete, renewed material (the leaf's CA is in the bundle by construction). */
export function servingMaterialOf(material: GeneratedMaterial): ServingMaterial {
  const [leaf, ...intermediates] = parseCertificates(material.certPem);
  const bundle = parseCertificates(material.caBundlePem);
  if (!leaf) throw new Error('generated material has no serving certificate');
  const root = chainRoot(leaf, intermediates, bundle);
  if (!root) throw new Error('generated serving certificate does not chain to the CA bundle');
  return {
    certPem: material.certPem,
    keyPem: material.keyPem,
    caBundlePem: material.caBundlePem,
    certNotAfter: notAfter(leaf),
    caNotAfter: notAfter(root),
  };
}
