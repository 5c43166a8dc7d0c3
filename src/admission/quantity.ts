/**
 * Kubernetes resource quantities ("100m", "128Mi", "1.5", "2e3", "1E"), parsed exactly as
 * k8s.io/apimachinery's resource.ParseQuantity does: an optional sign, digits with at most one
 * point, then a decimal suffix (n u m "" k M G T P E), a binary one (Ki Mi Gi Ti Pi Ei) or an
 * exponent (e3, E-3) (the digits may be missing: "Mi" and "." are 0); values finer than 1n round up (away from zero) to the next nano, and
 * binary values are capped at 2^63-1. The value is an exact decimal.
 */

/** unscaled × 10^-scale, exactly. */
export interface Decimal {
  unscaled: bigint;
  scale: number;
}

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const SHAPE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const MAX_INT64 = 2n ** 63n - 1n;

export type QuantityParse = { ok: true; value: Decimal } | { ok: false; reason: 'format' | 'suffix' };

/** As ParseQuantity: ErrFormatWrong ('format') or ErrSuffix ('suffix') when it is no quantity. */
export function parseQuantityExact(text: string): QuantityParse {
  const match = SHAPE.exec(text);
  if (!match || text === '') return { ok: false, reason: 'format' };
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match;
  const exponentSuffix = /^[eE]([-+]?[0-9]+)$/.exec(suffix);
  let base: 2 | 10;
  let exponent: number;
  let binary = false;
  if (suffix in DECIMAL_SUFFIXES) [base, exponent] = [10, DECIMAL_SUFFIXES[suffix]!];
  else if (suffix in BINARY_SUFFIXES) [base, exponent, binary] = [2, BINARY_SUFFIXES[suffix]!, true];
  else if (exponentSuffix) [base, exponent] = [10, Number(exponentSuffix[1])];
  else return { ok: false, reason: 'suffix' };
  if (!Number.isSafeInteger(exponent)) return { ok: false, reason: 'suffix' };
  let value: Decimal = { unscaled: BigInt((whole || '0') + fraction), scale: fraction.length };
  value = base === 10 ? { unscaled: value.unscaled, scale: value.scale - exponent } : { unscaled: value.unscaled * 2n ** BigInt(exponent), scale: value.scale };
  value = roundUpToNano(value);
  if (binary && compareDecimal(value, { unscaled: MAX_INT64, scale: 0 }) > 0) value = { unscaled: MAX_INT64, scale: 0 };
  return { ok: true, value: normalize(sign === '-' ? { unscaled: -value.unscaled, scale: value.scale } : value) };
}

/** Away from zero to a multiple of 10^-9 (ParseQuantity's inf.RoundUp at nano scale). */
function roundUpToNano(value: Decimal): Decimal {
  if (value.scale <= 9) return value;
  const divisor = 10n ** BigInt(value.scale - 9);
  const quotient = value.unscaled / divisor;
  return { unscaled: value.unscaled % divisor === 0n ? quotient : quotient + 1n, scale: 9 };
}

/** The same value with no trailing zeros in `unscaled` (and scale 0 for zero). */
export function normalize(value: Decimal): Decimal {
  if (value.unscaled === 0n) return { unscaled: 0n, scale: 0 };
  let { unscaled, scale } = value;
  while (unscaled % 10n === 0n) {
    unscaled /= 10n;
    scale--;
  }
  return { unscaled, scale };
}

function aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.unscaled * 10n ** BigInt(scale - a.scale), b.unscaled * 10n ** BigInt(scale - b.scale), scale];
}

export function compareDecimal(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const [x, y] = aligned(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function addDecimal(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = aligned(a, b);
  return normalize({ unscaled: x + y, scale });
}

export function negateDecimal(a: Decimal): Decimal {
  return { unscaled: -a.unscaled, scale: a.scale };
}

/** The integer value when there is one (no fraction); it may exceed int64. */
export function decimalInteger(a: Decimal): bigint | undefined {
  if (a.scale <= 0) return a.unscaled * 10n ** BigInt(-a.scale);
  const divisor = 10n ** BigInt(a.scale);
  return a.unscaled % divisor === 0n ? a.unscaled / divisor : undefined;
}

export function decimalToNumber(a: Decimal): number {
  return Number(`${a.unscaled}e${-a.scale}`);
}

/** The value of a non-negative quantity, or undefined when it is not one (for comparisons that need no exactness). */
export function parseQuantity(text: string): number | undefined {
  if (text.startsWith('-') || text.startsWith('+')) return undefined;
  const parsed = parseQuantityExact(text);
  return parsed.ok ? decimalToNumber(parsed.value) : undefined;
}

export const QUANTITY_HINT = 'a non-negative Kubernetes quantity such as "100m", "0.5", "128Mi" or "1Gi"';
