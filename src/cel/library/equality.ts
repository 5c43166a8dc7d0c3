/**
 * CEL equality as cel-go computes it at run time (heterogeneous numeric equality: 1 == 1u == 1.0;
 * lists element by element; maps by key set and values; optionals by presence, then value; types
 * by name): what sets.* and distinct() compare with, and `==` where cel-js declares none.
 */
import { Optional } from '@marcbachmann/cel-js';

function numeric(value: unknown): number | bigint | undefined {
  if (typeof value === 'bigint' || typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && value.constructor?.name === 'UnsignedInt') return (value as { valueOf(): bigint }).valueOf();
  return undefined;
}

function entriesOf(value: object): [unknown, unknown][] | undefined {
  if (value instanceof Map) return [...value.entries()];
  if (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null) return Object.entries(value);
  return undefined;
}

/** Two values of one library type (the constructor checked by the caller): its own equality, else its fields. */
function sameValue(a: object, b: object): boolean {
  const own = (a as { equals?: (other: unknown) => boolean }).equals;
  if (typeof own === 'function') return own.call(a, b);
  // The engine's Type and Duration keep their fields private: compare what they expose.
  if (a.constructor?.name === 'Type') return (a as { name: string }).name === (b as { name: string }).name;
  if (a.constructor?.name === 'Duration') {
    const [x, y] = [a as { seconds: bigint; nanos: number }, b as { seconds: bigint; nanos: number }];
    return x.seconds === y.seconds && x.nanos === y.nanos;
  }
  const text = (value: object) => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  return text(a) === text(b);
}

export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const x = numeric(a);
  const y = numeric(b);
  if (x !== undefined || y !== undefined) {
    if (x === undefined || y === undefined) return false;
    if (typeof x === 'number' && Number.isNaN(x)) return false;
    return x == y;
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Optional || b instanceof Optional) return a instanceof Optional && b instanceof Optional && optionalEquals(a, b);
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => celEquals(item, b[i]));
  if (a instanceof Uint8Array || b instanceof Uint8Array) return a instanceof Uint8Array && b instanceof Uint8Array && a.length === b.length && a.every((v, i) => v === b[i]);
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  const left = entriesOf(a);
  const right = entriesOf(b);
  if (!left || !right) return a.constructor === b.constructor && sameValue(a, b);
  if (left.length !== right.length) return false;
  return left.every(([key, value]) => right.some(([otherKey, otherValue]) => celEquals(key, otherKey) && celEquals(value, otherValue)));
}

/** cel-go's Optional.Equal: two empty optionals are equal; a value only equals an equal value. */
export function optionalEquals(a: Optional, b: Optional): boolean {
  return a.hasValue() ? b.hasValue() && celEquals(a.value(), b.value()) : !b.hasValue();
}
