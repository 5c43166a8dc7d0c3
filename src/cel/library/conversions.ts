/**
 * The conversions of cel-go's standard library (common/stdlib/standard.go) that the CEL library
 * lacks, with cel-go's results and errors: `int(uint)` (an error past int64, "integer overflow"),
 * `int(duration)` (nanoseconds), `int(timestamp)` (Unix seconds), `string(timestamp)` (RFC 3339,
 * UTC, fractional seconds without trailing zeros) and `string(duration)` (seconds, `1.5s`).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { fail } from './errors.js';

const MAX_INT = 2n ** 63n - 1n;
const MIN_INT = -(2n ** 63n);
const NANOS_PER_SECOND = 1_000_000_000n;

interface CelDuration {
  seconds: bigint;
  nanos: number;
}

function checkedInt(value: bigint): bigint {
  return value > MAX_INT || value < MIN_INT ? fail('integer overflow') : value;
}

/** Go's time.Time.Format(time.RFC3339Nano) in UTC: `2024-01-01T00:00:00Z`, `...:00.5Z`. */
export function formatTimestamp(time: Date): string {
  const [seconds, fraction = ''] = time.toISOString().replace(/Z$/, '').split('.');
  const trimmed = fraction.replace(/0+$/, '');
  return `${seconds}${trimmed ? `.${trimmed}` : ''}Z`;
}

/** cel-go's Duration to string: the seconds as the shortest decimal, then `s`. */
function formatDuration(duration: CelDuration): string {
  const total = duration.seconds * NANOS_PER_SECOND + BigInt(duration.nanos);
  const sign = total < 0n ? '-' : '';
  const magnitude = total < 0n ? -total : total;
  const fraction = (magnitude % NANOS_PER_SECOND).toString().padStart(9, '0').replace(/0+$/, '');
  return `${sign}${magnitude / NANOS_PER_SECOND}${fraction ? `.${fraction}` : ''}s`;
}

export function registerConversions(env: Environment): void {
  env.registerFunction('int(uint): int', (value: { valueOf(): bigint }) => checkedInt(value.valueOf()));
  env.registerFunction('int(google.protobuf.Duration): int', (d: CelDuration) => checkedInt(d.seconds * NANOS_PER_SECOND + BigInt(d.nanos)));
  env.registerFunction('int(google.protobuf.Timestamp): int', (time: Date) => BigInt(Math.floor(time.getTime() / 1000)));
  env.registerFunction('string(google.protobuf.Timestamp): string', formatTimestamp);
  env.registerFunction('string(google.protobuf.Duration): string', formatDuration);
}
