/**
 * The part of Kubernetes' CEL Quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go)
 * the double's policies use, for @bufbuild/cel: `quantity(string)`, `isQuantity(string)`, and on
 * a quantity `compareTo`, `isGreaterThan`, `isLessThan`. A quantity is carried as a CEL double
 * (its value in base units), since @bufbuild/cel takes no opaque type without protobuf
 * descriptors: comparisons are exact up to 2^53 base units, and the double does not refuse what
 * kube-apiserver's type checker would (`quantity("1") == 1.0` is a type error there). The grammar
 * is resource.Quantity's: an optional sign, digits with an optional fraction, then a binary
 * suffix (Ki..Ei), a decimal one (n, u, m, k, M, G, T, P, E) or an exponent (e3, E-2).
 */
import { celFunc, celMethod, CelScalar } from '@bufbuild/cel';

const DECIMAL: Readonly<Record<string, number>> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const BINARY: Readonly<Record<string, number>> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const QUANTITY = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

/** The quantity's value in base units, or undefined when the text is no quantity. */
export function parseQuantity(text: string): number | undefined {
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const number = Number(match[1]);
  const suffix = match[2] ?? '';
  if (suffix in BINARY) return number * BINARY[suffix]!;
  if (suffix in DECIMAL) return number * DECIMAL[suffix]!;
  return number * 10 ** Number(suffix.slice(1));
}

function quantity(text: string): number {
  const value = parseQuantity(text);
  if (value === undefined) throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  return value;
}

export const QUANTITY_FUNCS = [
  celFunc('quantity', [CelScalar.STRING], CelScalar.DOUBLE, quantity),
  celFunc('isQuantity', [CelScalar.STRING], CelScalar.BOOL, (text) => parseQuantity(text) !== undefined),
  celMethod('compareTo', CelScalar.DOUBLE, [CelScalar.DOUBLE], CelScalar.INT, function (other) {
    return BigInt(Math.sign(this - other));
  }),
  celMethod('isGreaterThan', CelScalar.DOUBLE, [CelScalar.DOUBLE], CelScalar.BOOL, function (other) {
    return this > other;
  }),
  celMethod('isLessThan', CelScalar.DOUBLE, [CelScalar.DOUBLE], CelScalar.BOOL, function (other) {
    return this < other;
  }),
];
