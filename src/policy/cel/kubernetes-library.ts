/**
 * The parts of Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library) that the CEL
 * library lacks, registered on an environment: regex find/findAll (RE2), lists, quantity, url,
 * ip/cidr, and the string functions charAt and replace. docs/policy.md lists what is there.
 */
import { BlockList, isIP, isIPv4 } from 'node:net';
import type { Environment } from '@marcbachmann/cel-js';
import { parseQuantity } from '../quantity.js';
import { regexCost, RegexSyntaxError, regexFind, regexFindAll, regexMatches } from '../regular-expressions.js';
import { chargeCost } from './budget.js';

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

type Comparable = bigint | number | string;

function compare(a: unknown, b: unknown): number {
  const numeric = (v: unknown) => typeof v === 'bigint' || typeof v === 'number';
  if (numeric(a) && numeric(b)) return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return fail(`cannot compare ${typeof a} with ${typeof b}`);
}

function extreme(list: readonly unknown[], sign: 1 | -1): unknown {
  if (list.length === 0) fail('min/max of an empty list');
  return list.reduce((best, item) => (compare(item, best) * sign > 0 ? item : best));
}

function registerLists(env: Environment): void {
  env.registerFunction('list.isSorted(): bool', (list: unknown[]) => list.every((item, i) => i === 0 || compare(list[i - 1], item) <= 0));
  env.registerFunction('list.sum(): dyn', (list: Comparable[]) => {
    if (list.length === 0) return 0n;
    return list.reduce((sum, item) => {
      if (typeof sum !== typeof item || typeof item === 'string') fail('sum() needs a list of ints or of doubles');
      return (sum as number) + (item as number);
    });
  });
  env.registerFunction('list.min(): dyn', (list: unknown[]) => extreme(list, -1));
  env.registerFunction('list.max(): dyn', (list: unknown[]) => extreme(list, 1));
  const equal = (a: unknown, b: unknown) => a === b || (typeof a !== 'object' && typeof b !== 'object' && compareSafe(a, b) === 0);
  env.registerFunction('list.indexOf(dyn): int', (list: unknown[], value: unknown) => BigInt(list.findIndex((item) => equal(item, value))));
  env.registerFunction('list.lastIndexOf(dyn): int', (list: unknown[], value: unknown) => BigInt(list.findLastIndex((item) => equal(item, value))));
}

function compareSafe(a: unknown, b: unknown): number | undefined {
  try {
    return compare(a, b);
  } catch {
    return undefined;
  }
}

/** A resource quantity; compared by value (exact up to 2^53 of its smallest unit, like most real quantities). */
export class Quantity {
  constructor(
    readonly text: string,
    readonly value: number,
  ) {}
}

function quantityOf(text: string): Quantity {
  const value = parseQuantity(text.startsWith('-') ? text.slice(1) : text.startsWith('+') ? text.slice(1) : text);
  if (value === undefined) fail(`"${text}" is not a quantity`);
  return new Quantity(text, text.startsWith('-') ? -value : value);
}

function plus(q: Quantity, delta: number): Quantity {
  const value = q.value + delta;
  return new Quantity(String(value), value);
}

function registerQuantity(env: Environment): void {
  env.registerType('Quantity', Quantity);
  env.registerFunction('quantity(string): Quantity', quantityOf);
  env.registerFunction('isQuantity(string): bool', (text: string) => {
    try {
      quantityOf(text);
      return true;
    } catch {
      return false;
    }
  });
  env.registerFunction('Quantity.isGreaterThan(Quantity): bool', (a: Quantity, b: Quantity) => a.value > b.value);
  env.registerFunction('Quantity.isLessThan(Quantity): bool', (a: Quantity, b: Quantity) => a.value < b.value);
  env.registerFunction('Quantity.compareTo(Quantity): int', (a: Quantity, b: Quantity) => BigInt(Math.sign(a.value - b.value)));
  env.registerFunction('Quantity.sign(): int', (a: Quantity) => BigInt(Math.sign(a.value)));
  env.registerFunction('Quantity.isInteger(): bool', (a: Quantity) => Number.isSafeInteger(a.value));
  env.registerFunction('Quantity.asInteger(): int', (a: Quantity) => (Number.isSafeInteger(a.value) ? BigInt(a.value) : fail(`${a.text} is not an integer`)));
  env.registerFunction('Quantity.asApproximateFloat(): double', (a: Quantity) => a.value);
  env.registerFunction('Quantity.add(Quantity): Quantity', (a: Quantity, b: Quantity) => plus(a, b.value));
  env.registerFunction('Quantity.add(int): Quantity', (a: Quantity, b: bigint) => plus(a, Number(b)));
  env.registerFunction('Quantity.sub(Quantity): Quantity', (a: Quantity, b: Quantity) => plus(a, -b.value));
  env.registerFunction('Quantity.sub(int): Quantity', (a: Quantity, b: bigint) => plus(a, -Number(b)));
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

/** An IP address (ip()), or a CIDR block (cidr()). */
export class Ip {
  constructor(readonly address: string) {}
  get family(): 4 | 6 {
    return isIPv4(this.address) ? 4 : 6;
  }
}

export class Cidr {
  constructor(
    readonly ip: Ip,
    readonly prefix: number,
  ) {}
  contains(address: string): boolean {
    const block = new BlockList();
    block.addSubnet(this.ip.address, this.prefix, this.ip.family === 4 ? 'ipv4' : 'ipv6');
    return isIP(address) !== 0 && block.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
  }
}

function ipOf(text: string): Ip {
  if (isIP(text) === 0 || text.includes('%')) fail(`"${text}" is not an IP address`);
  return new Ip(text);
}

function cidrOf(text: string): Cidr {
  const [address = '', prefix = '', extra] = text.split('/');
  const ip = ipOf(address);
  const bits = Number(prefix);
  if (extra !== undefined || !/^[0-9]+$/.test(prefix) || bits > (ip.family === 4 ? 32 : 128)) fail(`"${text}" is not a CIDR`);
  return new Cidr(ip, bits);
}

const succeeds = (parse: (text: string) => unknown) => (text: string) => {
  try {
    parse(text);
    return true;
  } catch {
    return false;
  }
};

function registerNetwork(env: Environment): void {
  env.registerType('IP', Ip);
  env.registerType('CIDR', Cidr);
  env.registerFunction('ip(string): IP', ipOf);
  env.registerFunction('isIP(string): bool', succeeds(ipOf));
  env.registerFunction('IP.family(): int', (ip: Ip) => BigInt(ip.family));
  env.registerFunction('IP.isLoopback(): bool', (ip: Ip) => cidrOf(ip.family === 4 ? '127.0.0.0/8' : '::1/128').contains(ip.address));
  env.registerFunction('IP.isUnspecified(): bool', (ip: Ip) => ip.address === '0.0.0.0' || ip.address === '::');
  env.registerFunction('cidr(string): CIDR', cidrOf);
  env.registerFunction('isCIDR(string): bool', succeeds(cidrOf));
  env.registerFunction('CIDR.containsIP(IP): bool', (c: Cidr, ip: Ip) => c.contains(ip.address));
  env.registerFunction('CIDR.containsIP(string): bool', (c: Cidr, ip: string) => c.contains(ipOf(ip).address));
  env.registerFunction('CIDR.prefixLength(): int', (c: Cidr) => BigInt(c.prefix));
  env.registerFunction('CIDR.ip(): IP', (c: Cidr) => c.ip);
}

/**
 * kube-apiserver's authorizer library, declared so that matchConditions using it compile as
 * they do there; outside kube-apiserver there is nobody to ask, so every check is an error
 * (the webhook's failurePolicy then decides, as for any failing condition).
 */
export class Authorizer {
  get requestResource(): AuthorizerCheck {
    return new AuthorizerCheck();
  }
}
export class AuthorizerCheck {}
export class AuthorizerDecision {}

function unavailable(): never {
  return fail('authorizer checks need kube-apiserver; they cannot be evaluated here');
}

function registerAuthorizer(env: Environment): void {
  env.registerType('AuthorizerCheck', AuthorizerCheck);
  env.registerType('AuthorizerDecision', AuthorizerDecision);
  env.registerType('Authorizer', { ctor: Authorizer, fields: { requestResource: 'AuthorizerCheck' } });
  env.registerFunction('Authorizer.group(string): AuthorizerCheck', () => new AuthorizerCheck());
  env.registerFunction('Authorizer.path(string): AuthorizerCheck', () => new AuthorizerCheck());
  env.registerFunction('Authorizer.serviceAccount(string, string): Authorizer', () => new Authorizer());
  for (const step of ['resource', 'subresource', 'namespace', 'name']) {
    env.registerFunction(`AuthorizerCheck.${step}(string): AuthorizerCheck`, (check: AuthorizerCheck) => check);
  }
  env.registerFunction('AuthorizerCheck.check(string): AuthorizerDecision', unavailable);
  env.registerFunction('AuthorizerDecision.allowed(): bool', unavailable);
  env.registerFunction('AuthorizerDecision.errored(): bool', unavailable);
  env.registerFunction('AuthorizerDecision.reason(): string', unavailable);
  env.registerFunction('AuthorizerDecision.error(): string', unavailable);
}

/** Registers every Kubernetes library function this server supports. */
export function registerKubernetesLibrary(env: Environment): Environment {
  registerRegex(env);
  registerStrings(env);
  registerLists(env);
  registerQuantity(env);
  registerUrl(env);
  registerNetwork(env);
  registerAuthorizer(env);
  return env;
}
