/** How cel-go's checker relates two checked types, for the types this library produces. */
import type { CelType } from './internals.js';

/** A type parameter (`list<T>`) the checker left unbound: it fits anything. */
export function hasPlaceholder(type: CelType): boolean {
  return /(^|[<, ])[A-Z]([>, ]|$)/.test(type.name);
}

/** cel-go's isAssignable: equal, or dyn (at any depth) on either side. */
export function assignable(a: CelType, b: CelType): boolean {
  if (a.name === b.name || a.kind === 'dyn' || b.kind === 'dyn' || hasPlaceholder(a) || hasPlaceholder(b)) return true;
  if (a.kind !== b.kind) return false;
  if (a.kind === 'list' || a.kind === 'optional') return a.valueType && b.valueType ? assignable(a.valueType, b.valueType) : true;
  if (a.kind === 'map') return !!a.keyType && !!b.keyType && !!a.valueType && !!b.valueType && assignable(a.keyType, b.keyType) && assignable(a.valueType, b.valueType);
  return false;
}
