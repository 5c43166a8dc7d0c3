/**
 * Kubernetes' quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go) on exact decimals:
 * `quantity("9999999999999999999999999999999999999G")` keeps every digit, `1E` is 10^18, equality
 * compares values (`quantity("200M") == quantity("0.2G")`), and add/sub never round.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { addDecimal, compareDecimal, decimalInteger, decimalToNumber, negateDecimal, parseQuantityExact, type Decimal } from '../../admission/quantity.js';
import { fail } from './errors.js';

const MIN_INT = -(2n ** 63n);
const MAX_INT = 2n ** 63n - 1n;
const QUANTITY_PATTERN = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';

export class Quantity {
  constructor(
    readonly text: string,
    readonly value: Decimal,
  ) {}
  /** CEL equality (inside lists, maps and sets.*): by value, as `==`. */
  equals(other: Quantity): boolean {
    return compareDecimal(this.value, other.value) === 0;
  }
}

function quantityOf(text: string): Quantity {
  const parsed = parseQuantityExact(text);
  if (parsed.ok) return new Quantity(text, parsed.value);
  return parsed.reason === 'format' ? fail(`quantities must match the regular expression '${QUANTITY_PATTERN}'`) : fail("unable to parse quantity's suffix");
}

function fromDecimal(value: Decimal): Quantity {
  return new Quantity(decimalToNumber(value).toString(), value);
}

/** As resource.Quantity.AsInt64: the value when it is an integer within int64. */
function asInt64(q: Quantity): bigint | undefined {
  const integer = decimalInteger(q.value);
  return integer !== undefined && integer >= MIN_INT && integer <= MAX_INT ? integer : undefined;
}

const sign = (q: Quantity): bigint => (q.value.unscaled > 0n ? 1n : q.value.unscaled < 0n ? -1n : 0n);

export function registerQuantity(env: Environment): void {
  env.registerType('Quantity', Quantity);
  env.registerFunction('quantity(string): Quantity', quantityOf);
  env.registerFunction('isQuantity(string): bool', (text: string) => parseQuantityExact(text).ok);
  env.registerOperator('Quantity == Quantity', (a: Quantity, b: Quantity) => compareDecimal(a.value, b.value) === 0);
  env.registerFunction('Quantity.isGreaterThan(Quantity): bool', (a: Quantity, b: Quantity) => compareDecimal(a.value, b.value) > 0);
  env.registerFunction('Quantity.isLessThan(Quantity): bool', (a: Quantity, b: Quantity) => compareDecimal(a.value, b.value) < 0);
  env.registerFunction('Quantity.compareTo(Quantity): int', (a: Quantity, b: Quantity) => BigInt(compareDecimal(a.value, b.value)));
  env.registerFunction('Quantity.sign(): int', sign);
  env.registerFunction('Quantity.isInteger(): bool', (a: Quantity) => asInt64(a) !== undefined);
  env.registerFunction('Quantity.asInteger(): int', (a: Quantity) => asInt64(a) ?? fail('cannot convert value to integer'));
  env.registerFunction('Quantity.asApproximateFloat(): double', (a: Quantity) => decimalToNumber(a.value));
  env.registerFunction('Quantity.add(Quantity): Quantity', (a: Quantity, b: Quantity) => fromDecimal(addDecimal(a.value, b.value)));
  env.registerFunction('Quantity.add(int): Quantity', (a: Quantity, b: bigint) => fromDecimal(addDecimal(a.value, { unscaled: b, scale: 0 })));
  env.registerFunction('Quantity.sub(Quantity): Quantity', (a: Quantity, b: Quantity) => fromDecimal(addDecimal(a.value, negateDecimal(b.value))));
  env.registerFunction('Quantity.sub(int): Quantity', (a: Quantity, b: bigint) => fromDecimal(addDecimal(a.value, { unscaled: -b, scale: 0 })));
}
