/** CEL ordering of comparable values (int, uint, double across types; string; bool; bytes; timestamp; duration). */
import { fail } from './errors.js';

function numeric(value: unknown): number | bigint | undefined {
  if (typeof value === 'bigint' || typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && value.constructor?.name === 'UnsignedInt') return (value as { valueOf(): bigint }).valueOf();
  return undefined;
}

function kind(value: unknown): string {
  if (numeric(value) !== undefined) return 'number';
  if (value instanceof Date) return 'timestamp';
  if (value instanceof Uint8Array) return 'bytes';
  if (typeof value === 'object' && value !== null && value.constructor?.name === 'Duration') return 'duration';
  return typeof value;
}

/** -1, 0 or 1; an error ("list elements must have the same type") when the two do not compare. */
export function compareValues(a: unknown, b: unknown): number {
  const [ka, kb] = [kind(a), kind(b)];
  if (ka !== kb) return fail('list elements must have the same type');
  if (ka === 'number') {
    const [x, y] = [numeric(a)!, numeric(b)!];
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (ka === 'string' || ka === 'boolean') return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
  if (ka === 'timestamp') return Math.sign((a as Date).getTime() - (b as Date).getTime());
  if (ka === 'duration') {
    const [x, y] = [a as { seconds: bigint; nanos: number }, b as { seconds: bigint; nanos: number }];
    return x.seconds !== y.seconds ? (x.seconds < y.seconds ? -1 : 1) : Math.sign(x.nanos - y.nanos);
  }
  if (ka === 'bytes') {
    const [x, y] = [a as Uint8Array, b as Uint8Array];
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
    return Math.sign(x.length - y.length);
  }
  return fail('list elements must be comparable');
}
