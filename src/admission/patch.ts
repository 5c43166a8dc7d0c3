import jsonPatch from 'fast-json-patch';
import rfdc from 'rfdc';
import { diffJson } from './json-diff.js';
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
  return diffJson(original, desired);
}

const cloneAnything = rfdc({ proto: false, circles: false });

function copyValue(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? copyContainer(value) : value;
}

/**
 * Plain objects and arrays copied here, anything else (a Date, a Map, a class instance: values a
 * handler or a test may hold) by rfdc, which knows those. A key "__proto__" (JSON.parse makes it
 * an own property, and a ConfigMap may hold one) stays an own property instead of becoming the
 * copy's prototype.
 */
function copyContainer(value: object): unknown {
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) copy[index] = copyValue(value[index]);
    return copy;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return cloneAnything(value);
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    // Only own keys, as rfdc: an enumerable key someone added to Object.prototype is not copied in.
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const item = copyValue((value as Record<string, unknown>)[key]);
    if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy;
}

/**
 * A deep copy of a JSON value (an object from a review). It sits on every mutating review: on a
 * ~1 KB Pod 0.52 µs, where rfdc alone took 0.65 and structuredClone 3.9.
 */
export function copyObject<T>(value: T): T {
  return copyValue(value) as T;
}

/**
 * The operations with a copy of each object or array they insert. fast-json-patch inserts an
 * add's or replace's value by reference: without the copy the patched document and the patch
 * share it, and whatever edits the document afterwards (a later patch, decoding's defaults)
 * rewrites the patch that was sent or reported. Scalars and the other operations need none.
 */
function ownValues(operations: readonly PatchOperation[]): jsonPatch.Operation[] {
  return operations.map((operation) =>
    (operation.op === 'add' || operation.op === 'replace') && typeof operation.value === 'object' && operation.value !== null ? { ...operation, value: copyObject(operation.value) } : operation,
  ) as jsonPatch.Operation[];
}

/** Applies `operations` to a copy of `document` (the caller's object and the operations are left alone). */
export function applyPatch<T>(document: T, operations: readonly PatchOperation[]): T {
  return jsonPatch.applyPatch(copyObject(document), ownValues(operations), true, true).newDocument;
}

/**
 * Applies a patch computePatch() made to `document` itself (the caller owns it), unvalidated as
 * it is well-formed by construction; the operations are left alone.
 */
export function applyPatchInPlace<T>(document: T, operations: readonly PatchOperation[]): T {
  return jsonPatch.applyPatch(document, ownValues(operations), false, true).newDocument;
}
