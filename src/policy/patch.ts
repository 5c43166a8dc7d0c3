import jsonPatch from 'fast-json-patch';
import type { KubeObject } from './types.js';

/** One RFC 6902 operation, as kube-apiserver applies it (evanphx json-patch). */
export interface PatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

/**
 * The RFC 6902 operations that turn `original` into `desired`; empty when they are equal.
 * Handlers return the object they want, so nobody hand-writes JSON pointers.
 */
export function computePatch(original: KubeObject, desired: KubeObject): PatchOperation[] {
  return jsonPatch.compare(original, desired) as PatchOperation[];
}

/** Applies `operations` to a copy of `document` (the caller's object is left alone). */
export function applyPatch<T>(document: T, operations: readonly PatchOperation[]): T {
  const copy = jsonPatch.deepClone(document) as T;
  return jsonPatch.applyPatch(copy, operations as jsonPatch.Operation[], true, true).newDocument;
}
