/**
 * The parts of Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library) that every
 * Kubernetes version has and the CEL library lacks: regex find/findAll (RE2), lists, url, and the
 * string functions charAt and replace. The versioned libraries are in library/; docs/cel.md
 * lists everything by version.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { regexCost, RegexSyntaxError, regexFind, regexFindAll, regexMatches } from './regular-expressions.js';
import { chargeCost } from './budget.js';
import { celEquals } from './library/equality.js';
import { compareValues } from './library/ordering.js';

class CelFunctionError extends Error {}

function fail(message: string): never {
  throw new CelFunctionError(message);
}

/** A regex call: RE2 semantics, its cost charged to the running budget, a bad pattern an evaluation error. */
function regexCall<T>(text: string, pattern: string, run: () => T, errorPrefix = ''): T {
  chargeCost(regexCost(text, pattern));
  try {
    return run();
  } catch (error) {
    if (error instanceof RegexSyntaxError) fail(errorPrefix + error.message);
    throw error;
  }
}

/** Kubernetes' words for a bad pattern given to find/findAll at run time. */
const ILLEGAL_REGEX = 'Illegal regex: ';

function registerRegex(env: Environment): void {
  env.registerFunction('string.find(string): string', (text: string, pattern: string) => regexCall(text, pattern, () => regexFind(text, pattern), ILLEGAL_REGEX));
  env.registerFunction('string.findAll(string): list<string>', (text: string, pattern: string) => regexCall(text, pattern, () => regexFindAll(text, pattern), ILLEGAL_REGEX));
  env.registerFunction('string.findAll(string, int): list<string>', (text: string, pattern: string, limit: bigint) =>
    regexCall(text, pattern, () => regexFindAll(text, pattern, limit < 0n ? -1 : Number(limit)), ILLEGAL_REGEX),
  );
  // CEL's global form; the receiver form string.matches is the base library's, re-routed to RE2 in compile.ts.
  env.registerFunction('matches(string, string): bool', (text: string, pattern: string) => regexCall(text, pattern, () => regexMatches(text, pattern)));
}

function registerStrings(env: Environment): void {
  env.registerFunction('string.charAt(int): string', (text: string, index: bigint) => {
    const chars = Array.from(text);
    if (index < 0n || index > BigInt(chars.length)) fail(`index out of range: ${index}`);
    return chars[Number(index)] ?? '';
  });
  env.registerFunction('string.replace(string, string): string', (text: string, from: string, to: string) => text.replaceAll(from, to));
  env.registerFunction('string.replace(string, string, int): string', (text: string, from: string, to: string, count: bigint) => {
    if (count < 0n) return text.replaceAll(from, to);
    let result = text;
    let start = 0;
    for (let i = 0n; i < count; i++) {
      const at = result.indexOf(from, start);
      if (at < 0) break;
      result = result.slice(0, at) + to + result.slice(at + from.length);
      start = at + to.length;
    }
    return result;
  });
}

/** The kind of a summable value, as Kubernetes' lists library types sum(): int, uint, double or duration. */
function summable(value: unknown): 'int' | 'uint' | 'double' | 'duration' | undefined {
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'double';
  const name = typeof value === 'object' && value !== null ? value.constructor?.name : undefined;
  return name === 'UnsignedInt' ? 'uint' : name === 'Duration' ? 'duration' : undefined;
}

const MAX_INT = 2n ** 63n - 1n;
const MIN_INT = -(2n ** 63n);

/** Kubernetes' sum(): the elements added with CEL's +, so an int sum past int64 is cel-go's "integer overflow". */
function sum(list: readonly unknown[]): unknown {
  if (list.length === 0) return 0n;
  const kind = summable(list[0]);
  if (!kind || list.some((item) => summable(item) !== kind)) fail('sum() needs a list of ints, uints, doubles or durations');
  switch (kind) {
    case 'int': {
      const total = (list as bigint[]).reduce((a, b) => a + b, 0n);
      return total > MAX_INT || total < MIN_INT ? fail('integer overflow') : total;
    }
    case 'double':
      return (list as number[]).reduce((a, b) => a + b, 0);
    case 'uint': {
      // The library's own uint type: its constructor refuses a sum past 2^64 - 1 ("Unsigned integer overflow").
      const ctor = (list[0] as object).constructor as new (value: bigint) => unknown;
      return new ctor((list as { valueOf(): bigint }[]).reduce((total: bigint, b) => total + b.valueOf(), 0n));
    }
    case 'duration':
      type Addable = { addDuration(other: Addable): Addable };
      return (list as Addable[]).reduce((total, b) => total.addDuration(b));
  }
}

function extreme(list: readonly unknown[], sign: 1 | -1): unknown {
  if (list.length === 0) fail(`${sign > 0 ? 'max' : 'min'} called on empty list`);
  return list.reduce((best, item) => (compareValues(item, best) * sign > 0 ? item : best));
}

function registerLists(env: Environment): void {
  env.registerFunction('list.isSorted(): bool', (list: unknown[]) => list.every((item, i) => i === 0 || compareValues(list[i - 1], item) <= 0));
  env.registerFunction('list.sum(): dyn', sum);
  env.registerFunction('list.min(): dyn', (list: unknown[]) => extreme(list, -1));
  env.registerFunction('list.max(): dyn', (list: unknown[]) => extreme(list, 1));
  env.registerFunction('list.indexOf(dyn): int', (list: unknown[], value: unknown) => BigInt(list.findIndex((item) => celEquals(item, value))));
  env.registerFunction('list.lastIndexOf(dyn): int', (list: unknown[], value: unknown) => BigInt(list.findLastIndex((item) => celEquals(item, value))));
}

/** A URL as Kubernetes' url() reads it: absolute, or an absolute path. */
export class Url {
  constructor(readonly url: URL) {}
}

function urlOf(text: string): Url {
  try {
    return new Url(new URL(text, text.startsWith('/') ? 'relative:///' : undefined));
  } catch {
    return fail(`"${text}" is not a URL`);
  }
}

function registerUrl(env: Environment): void {
  env.registerType('URL', Url);
  env.registerFunction('url(string): URL', urlOf);
  env.registerFunction('isURL(string): bool', (text: string) => URL.canParse(text) || text.startsWith('/'));
  const relative = (u: Url) => u.url.protocol === 'relative:';
  env.registerFunction('URL.getScheme(): string', (u: Url) => (relative(u) ? '' : u.url.protocol.replace(/:$/, '')));
  env.registerFunction('URL.getHost(): string', (u: Url) => u.url.host);
  env.registerFunction('URL.getHostname(): string', (u: Url) => u.url.hostname.replace(/^\[(.*)\]$/, '$1'));
  env.registerFunction('URL.getPort(): string', (u: Url) => u.url.port);
  env.registerFunction('URL.getEscapedPath(): string', (u: Url) => u.url.pathname);
  env.registerFunction('URL.getQuery(): map<string, list<string>>', (u: Url) => {
    const query: Record<string, string[]> = {};
    for (const [key, value] of u.url.searchParams) (query[key] ??= []).push(value);
    return query;
  });
}

/** Registers every Kubernetes library function this server supports. */
export function registerKubernetesLibrary(env: Environment): Environment {
  registerRegex(env);
  registerStrings(env);
  registerLists(env);
  registerUrl(env);
  return env;
}
