/**
 * The persisted form of generated material (the Secret's keys, or the files of --cert-dir), and
 * how it maps to what the server serves.
 */
import { chainRoot } from './validate.js';
import { notAfter, parseCertificates } from './pem.js';
import type { ServingMaterial } from './types.js';

export interface GeneratedMaterial {
  /** The CA that signs new leaves (ca.crt / ca.key). */
  caCertPem: string;
  caKeyPem: string;
  /** The served leaf (tls.crt / tls.key); during a rollover still signed by the previous CA. */
  certPem: string;
  keyPem: string;
  /** The published bundle (ca-bundle.crt): the current CA, plus the previous one during a rollover. */
  caBundlePem: string;
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
} as const satisfies Record<keyof GeneratedMaterial, string>;

export const PRIVATE_KEY_PARTS: readonly (keyof GeneratedMaterial)[] = ['caKeyPem', 'keyPem'];

/** Key/file name -> text, for writing. */
export function materialToEntries(material: GeneratedMaterial): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const part of Object.keys(MATERIAL_KEYS) as (keyof GeneratedMaterial)[]) entries[MATERIAL_KEYS[part]] = material[part];
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
