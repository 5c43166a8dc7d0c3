/**
 * How cel-go's checker relates two types (checker/types.go, cel-go 0.26): whether one is
 * assignable to another under a substitution of type parameters, the substitution growing as it
 * goes (`mapping`), a parameter bound twice taking the more general of its two types
 * (`mostGeneral`: list(int), then list(dyn), is list(dyn)), `dyn` fitting anything at any depth,
 * `null` fitting the nullable kinds, and the occurs check. Types are cel-js's checked types, read
 * as terms; a parameter left in a checked type (`optional.none()` is `optional<T>`) is a free one.
 */
import type { CelType } from './internals.js';

/**
 * A type as the checker relates it: a kind, a name and its parameters. `primitive` is a value
 * type (int, string, bytes, type, ...); `message` a type a library declares (net.IP, a duration,
 * the AdmissionRequest), which null is assignable to.
 */
export interface Term {
  readonly kind: 'dyn' | 'param' | 'null' | 'primitive' | 'message' | 'list' | 'map' | 'optional';
  readonly name: string;
  readonly params: readonly Term[];
}

/** The substitution of type parameters found so far, by parameter name. */
export type Mapping = Map<string, Term>;

const DYN: Term = { kind: 'dyn', name: 'dyn', params: [] };

/**
 * `type` as a term; `rename` gives its parameters other names (an overload's own parameters are
 * fresh, as cel-go instantiates them, and must not meet a free one of the same letter).
 */
export function termOf(type: CelType, rename: (name: string) => string = (name) => name): Term {
  switch (type.kind) {
    case 'dyn':
      return DYN;
    case 'param':
      return { kind: 'param', name: rename(type.name), params: [] };
    case 'list':
    case 'optional':
      return { kind: type.kind, name: type.kind, params: [termOf(type.valueType!, rename)] };
    case 'map':
      return { kind: 'map', name: 'map', params: [termOf(type.keyType!, rename), termOf(type.valueType!, rename)] };
    case 'message':
      return { kind: 'message', name: type.name, params: [] };
    default:
      return { kind: type.name === 'null' ? 'null' : 'primitive', name: type.name, params: [] };
  }
}

/** The term as cel-js writes a type (`map<string, list<int>>`); `param` spells each parameter. */
export function typeText(term: Term, param: (name: string) => string = () => 'dyn'): string {
  switch (term.kind) {
    case 'param':
      return param(term.name);
    case 'list':
    case 'optional':
      return `${term.kind}<${typeText(term.params[0]!, param)}>`;
    case 'map':
      return `map<${typeText(term.params[0]!, param)}, ${typeText(term.params[1]!, param)}>`;
    default:
      return term.name;
  }
}

function exactlyEqual(t1: Term, t2: Term): boolean {
  return t1.kind === t2.kind && t1.name === t2.name && t1.params.length === t2.params.length && t1.params.every((p, i) => exactlyEqual(p, t2.params[i]!));
}

/** isEqualOrLessSpecific: t1 is t2, or matches it through dyn or a parameter. */
function isEqualOrLessSpecific(t1: Term, t2: Term): boolean {
  if (t1.kind === 'dyn' || t1.kind === 'param') return true;
  if (t2.kind === 'dyn' || t2.kind === 'param') return false;
  if (t1.kind !== t2.kind || t1.name !== t2.name || t1.params.length !== t2.params.length) return false;
  return t1.params.every((p, i) => isEqualOrLessSpecific(p, t2.params[i]!));
}

/** mostGeneral: of two types known to unify, the less specific. */
function mostGeneral(t1: Term, t2: Term): Term {
  return isEqualOrLessSpecific(t1, t2) ? t1 : t2;
}

/** notReferencedIn: the occurs check (a parameter is never bound to a type that holds it). */
function notReferencedIn(m: Mapping, param: Term, within: Term): boolean {
  if (exactlyEqual(param, within)) return false;
  if (within.kind === 'param') {
    const bound = m.get(within.name);
    return bound === undefined || notReferencedIn(m, param, bound);
  }
  return within.params.every((p) => notReferencedIn(m, param, p));
}

/** isValidTypeSubstitution: whether `param` (bound or not) can stand for `t`, binding it if need be; and whether it was bound. */
function validSubstitution(m: Mapping, t: Term, param: Term): { valid: boolean; bound: boolean } {
  if (exactlyEqual(t, param)) return { valid: true, bound: true };
  const bound = m.get(param.name);
  if (bound !== undefined) {
    if (exactlyEqual(t, bound)) return { valid: true, bound: true };
    if (!isAssignable(m, t, bound)) return { valid: false, bound: true };
    const general = mostGeneral(t, bound);
    if (notReferencedIn(m, param, general)) m.set(param.name, general);
    return { valid: true, bound: true };
  }
  if (!notReferencedIn(m, param, t)) return { valid: false, bound: false };
  m.set(param.name, t);
  return { valid: true, bound: false };
}

/** The kinds null is assignable to (cel-go's isLegacyNullable: opaque, struct, duration, timestamp; and null). */
function isNullable(t: Term): boolean {
  return t.kind === 'null' || t.kind === 'message' || t.kind === 'optional';
}

/** internalIsAssignable: t1 is assignable to t2 under `m`, which grows with the bindings this needs. */
export function isAssignable(m: Mapping, t1: Term, t2: Term): boolean {
  if (t2.kind === 'param') {
    const { valid, bound } = validSubstitution(m, t1, t2);
    if (valid) return true;
    if (bound) return false;
  }
  if (t1.kind === 'param') return validSubstitution(m, t2, t1).valid;
  if (t1.kind === 'dyn' || t2.kind === 'dyn') return true;
  if (t1.kind === 'null') return isNullable(t2);
  if (t2.kind === 'null') return isNullable(t1);
  if (t1.kind !== t2.kind || t1.name !== t2.name || t1.params.length !== t2.params.length) return false;
  return t1.params.every((p, i) => isAssignable(m, p, t2.params[i]!));
}

/** substitute: `t` with every bound parameter replaced by its binding (unbound ones stay). */
export function substitute(m: Mapping, t: Term): Term {
  if (t.kind === 'param') {
    const bound = m.get(t.name);
    return bound === undefined ? t : substitute(m, bound);
  }
  return t.params.length === 0 ? t : { ...t, params: t.params.map((p) => substitute(m, p)) };
}

/** cel-go's IsExactType on checked types, where a parameter left in one stands for the other (bound once, consistently). */
export function isSameType(m: Mapping, t1: Term, t2: Term): boolean {
  const [a, b] = [substitute(m, t1), substitute(m, t2)];
  if (a.kind === 'param' || b.kind === 'param') {
    if (exactlyEqual(a, b)) return true;
    const [param, other] = a.kind === 'param' ? [a, b] : [b, a];
    if (!notReferencedIn(m, param, other)) return false;
    m.set(param.name, other);
    return true;
  }
  if (a.kind !== b.kind || a.name !== b.name || a.params.length !== b.params.length) return false;
  return a.params.every((p, i) => isSameType(m, p, b.params[i]!));
}

/** cel-go's isAssignable with a fresh substitution: `b` fits where `a` is expected (HomogeneousAggregateLiterals, sets.*). */
export function assignable(a: CelType, b: CelType): boolean {
  return isAssignable(new Map(), termOf(a), termOf(b));
}

/** The two checked types are one type, parameters standing for what the other has (ValidateHomogeneousAggregateLiterals). */
export function sameType(a: CelType, b: CelType): boolean {
  return isSameType(new Map(), termOf(a), termOf(b));
}
