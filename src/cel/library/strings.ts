/**
 * cel-go's ext.Strings at version 2 (Kubernetes 1.29): `format` (the version-1 formatter,
 * cel-go ext/formatting.go) and `strings.quote`. `reverse` on strings is version 3, which
 * Kubernetes does not enable: it does not compile there, nor here.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { fail, namespaceType } from './errors.js';
import { goQuote, goShortestFloat } from './go-format.js';

type Kind = 'int' | 'uint' | 'double' | 'string' | 'bytes' | 'bool' | 'null' | 'list' | 'map' | 'timestamp' | 'duration' | 'other';

function kindOf(value: unknown): Kind {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'double';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (Array.isArray(value)) return 'list';
  if (value instanceof Uint8Array) return 'bytes';
  if (value instanceof Date) return 'timestamp';
  const name = (value as object).constructor?.name;
  if (name === 'UnsignedInt') return 'uint';
  if (name === 'Duration') return 'duration';
  if (value instanceof Map || name === 'Object' || Object.getPrototypeOf(value) === null) return 'map';
  return 'other';
}

const TYPE_NAMES: Record<Kind, string> = {
  int: 'int', uint: 'uint', double: 'double', string: 'string', bytes: 'bytes', bool: 'bool', null: 'null_type',
  list: 'list', map: 'map', timestamp: 'google.protobuf.Timestamp', duration: 'google.protobuf.Duration', other: 'unknown',
};

function integer(value: unknown): bigint {
  return typeof value === 'bigint' ? value : (value as { valueOf(): bigint }).valueOf();
}

function durationText(value: unknown): string {
  const { seconds, nanos } = value as { seconds: bigint; nanos: number };
  if (!nanos) return `${seconds}s`;
  const total = Number(seconds) + nanos / 1e9;
  return `${total.toFixed(9).replace(/0+$/, '')}s`;
}

function timestampText(value: Date): string {
  return value.toISOString().replace(/\.000Z$/, 'Z');
}

/** FormatString: %s of any value. */
function asString(value: unknown): string {
  switch (kindOf(value)) {
    case 'list':
      return `[${(value as unknown[]).map(inAggregate).join(', ')}]`;
    case 'map':
      return formatMap(value as Record<string, unknown>);
    case 'int':
    case 'uint':
      return String(integer(value));
    case 'double':
      return goShortestFloat(value as number);
    case 'bool':
    case 'string':
      return String(value);
    case 'bytes':
      return new TextDecoder().decode(value as Uint8Array);
    case 'timestamp':
      return timestampText(value as Date);
    case 'duration':
      return durationText(value);
    case 'null':
      return 'null';
    default:
      return fail(`error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given ${TYPE_NAMES[kindOf(value)]}`);
  }
}

/** A member of a list or map printed by %s: doubles with 6 decimals, strings quoted, times as CEL literals. */
function inAggregate(value: unknown): string {
  const kind = kindOf(value);
  if (kind === 'double') {
    const x = value as number;
    return Number.isFinite(x) ? x.toFixed(6) : goQuote(goShortestFloat(x));
  }
  if (kind === 'string') return goQuote(value as string);
  if (kind === 'bytes') return `b${goQuote(asString(value))}`;
  if (kind === 'timestamp') return `timestamp(${goQuote(timestampText(value as Date))})`;
  if (kind === 'duration') return `duration(${goQuote(durationText(value))})`;
  return asString(value);
}

function formatMap(map: Record<string, unknown> | Map<unknown, unknown>): string {
  const entries = map instanceof Map ? [...map.entries()] : Object.entries(map);
  const pairs = entries.map(([key, value]) => {
    const kind = kindOf(key);
    if (kind !== 'string' && kind !== 'bool' && kind !== 'int' && kind !== 'uint') fail(`no formatting function for map key of type ${TYPE_NAMES[kind]}`);
    return { key: kind === 'string' ? goQuote(key as string) : asString(key), value: inAggregate(value) };
  });
  pairs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return `{${pairs.map((p) => `${p.key}:${p.value}`).join(', ')}}`;
}

function needDouble(value: unknown, clause: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && ['NaN', 'Infinity', '-Infinity'].includes(value)) return Number(value);
  return fail(`error during formatting: ${clause} clause can only be used on doubles, was given ${TYPE_NAMES[kindOf(value)]}`);
}

function fixed(value: unknown, precision: number): string {
  const x = needDouble(value, 'fixed-point');
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '-∞';
  return x.toFixed(precision);
}

const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';

/** The en_US printer cel-go uses renders %e as "2.718280 × 10⁰⁰". */
function scientific(value: unknown, precision: number): string {
  const x = needDouble(value, 'scientific');
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '-∞';
  const [mantissa = '', exp = '0'] = x.toExponential(precision).split('e');
  const e = Number(exp);
  const digits = String(Math.abs(e)).padStart(2, '0').replace(/[0-9]/g, (d) => SUPERSCRIPT[Number(d)]!);
  return `${mantissa}\u202f\u00d7\u202f10${e < 0 ? '⁻' : ''}${digits}`;
}

function radix(value: unknown, base: 2 | 8 | 16, clause: string, upper = false): string {
  const kind = kindOf(value);
  if (kind === 'int' || kind === 'uint') {
    const text = integer(value).toString(base);
    return upper ? text.toUpperCase() : text;
  }
  if (base === 2 && kind === 'bool') return value ? '1' : '0';
  if (base === 16 && (kind === 'string' || kind === 'bytes')) {
    const bytes = kind === 'string' ? new TextEncoder().encode(value as string) : (value as Uint8Array);
    const text = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
    return upper ? text.toUpperCase() : text;
  }
  const what = base === 2 ? 'only integers and bools can be formatted as binary' : base === 8 ? 'octal clause can only be used on integers' : 'only integers, byte buffers, and strings can be formatted as hex';
  return fail(`error during formatting: ${what}, was given ${TYPE_NAMES[kind]}`);
}

function decimal(value: unknown): string {
  const kind = kindOf(value);
  if (kind === 'int' || kind === 'uint') return String(integer(value));
  return fail(`error during formatting: decimal clause can only be used on integers, was given ${TYPE_NAMES[kind]}`);
}

/** `<string>.format(<list>)`, printf-style with cel-go's clauses (%s %d %f %e %b %o %x %X, %.Nf, %.Ne). */
export function formatString(format: string, args: readonly unknown[]): string {
  let out = '';
  let next = 0;
  for (let i = 0; i < format.length; i++) {
    const ch = format[i]!;
    if (ch !== '%') {
      out += ch;
      continue;
    }
    if (format[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    const clause = /^%(?:\.([0-9]+))?([a-zA-Z]?)/.exec(format.slice(i))!;
    i += clause[0].length - 1;
    const verb = clause[2] ?? '';
    const precision = clause[1] === undefined ? 6 : Number(clause[1]);
    if (!'sdfebxXo'.includes(verb) || verb === '') fail(`could not parse formatting clause: unrecognized formatting clause "${verb}"`);
    if (next >= args.length) fail(`index ${next} out of range`);
    const value = args[next++];
    switch (verb) {
      case 's': out += asString(value); break;
      case 'd': out += decimal(value); break;
      case 'f': out += fixed(value, precision); break;
      case 'e': out += scientific(value, precision); break;
      case 'b': out += radix(value, 2, 'binary'); break;
      case 'o': out += radix(value, 8, 'octal'); break;
      case 'x': out += radix(value, 16, 'hex'); break;
      case 'X': out += radix(value, 16, 'hex', true); break;
    }
  }
  return out;
}

/** strings.quote: a double-quoted string with escapes for what would not print as itself. */
export function quote(text: string): string {
  return goQuote(text.replace(/[\ud800-\udfff]/g, (c, i: number, s: string) => (/[\ud800-\udbff]/.test(c) && /[\udc00-\udfff]/.test(s[i + 1] ?? '')) || (/[\udc00-\udfff]/.test(c) && /[\ud800-\udbff]/.test(s[i - 1] ?? '')) ? c : '\ufffd'));
}

export function registerStringsV2(env: Environment): void {
  env.registerFunction('string.format(list): string', formatString);
  const { typeName, value } = namespaceType('strings');
  env.registerType(typeName, value.constructor as new () => object);
  env.registerConstant('strings', typeName, value);
  env.registerFunction(`${typeName}.quote(string): string`, (_: unknown, text: string) => quote(text));
}
