import jsonPatch from 'fast-json-patch';
import rfdc from 'rfdc';
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

const cloneJson = rfdc({ proto: false, circles: false });

/**
 * A deep copy of a JSON value (an object from a review). About five times faster than a JSON
 * round trip or structuredClone on a ~1 KB Pod, and it sits on every mutating review.
 */
export function copyObject<T>(value: T): T {
  return cloneJson(value);
}

/** Applies `operations` to a copy of `document` (the caller's object is left alone). */
export function applyPatch<T>(document: T, operations: readonly PatchOperation[]): T {
  const copy = copyObject(document);
  return jsonPatch.applyPatch(copy, operations as jsonPatch.Operation[], true, true).newDocument;
}
