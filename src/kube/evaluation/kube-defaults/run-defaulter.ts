/** Translated Go defaulter statements (DefaulterOp), run on a decoded object. */
import { copyObject } from '../../../admission/patch.js';
import type { Cond, DefaulterOp, JsonValue, Path } from './schema-types.js';

export type JsonObject = { [key: string]: JsonValue };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A copy of a default or a copied field: rfdc's deep copy (copyObject), not structuredClone,
 * which costs several times more for the small JSON values decoding writes into every object.
 */
export function clone<T extends JsonValue>(value: T): T {
  return (value === null || typeof value !== 'object' ? value : copyObject(value)) as T;
}

export function get(node: JsonValue, path: Path): JsonValue | undefined {
  let current: JsonValue | undefined = node;
  for (const key of path) {
    if (!isObject(current)) return undefined;
    current = current[key];
    if (current === null) return undefined;
  }
  return current;
}

function isZero(value: JsonValue | undefined): boolean {
  if (value === undefined || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

function holds(node: JsonValue, cond: Cond): boolean {
  if ('all' in cond) return cond.all.every((c) => holds(node, c));
  if ('any' in cond) return cond.any.some((c) => holds(node, c));
  if ('absent' in cond) return get(node, cond.absent) === undefined;
  if ('present' in cond) return get(node, cond.present) !== undefined;
  if ('zero' in cond) return isZero(get(node, cond.zero));
  if ('nonzero' in cond) return !isZero(get(node, cond.nonzero));
  if ('truthy' in cond) return get(node, cond.truthy) === true;
  if ('equals' in cond) return get(node, cond.equals) === cond.value;
  return get(node, cond.differs) !== cond.value;
}

function set(node: JsonObject, path: Path, value: JsonValue): void {
  let current = node;
  for (const key of path.slice(0, -1)) {
    if (!isObject(current[key])) current[key] = {};
    current = current[key] as JsonObject;
  }
  current[path.at(-1)!] = value;
}

function remove(node: JsonObject, path: Path): void {
  const parent = get(node, path.slice(0, -1));
  if (isObject(parent)) delete parent[path.at(-1)!];
}

/** Runs translated Go defaulter statements on `node` (the object of the defaulter's type). */
export function runDefaulter(node: JsonObject, ops: readonly DefaulterOp[]): void {
  for (const op of ops) {
    if ('if' in op) runDefaulter(node, holds(node, op.if) ? op.then : (op.else ?? []));
    else if ('each' in op) {
      const list = get(node, op.each);
      if (Array.isArray(list)) for (const item of list) if (isObject(item)) runDefaulter(item, op.do);
    } else if ('set' in op) set(node, op.set, clone(op.value));
    else if ('remove' in op) remove(node, op.remove);
    else {
      const value = get(node, op.copy);
      if (value === undefined) remove(node, op.to);
      else set(node, op.to, clone(value));
    }
  }
}

