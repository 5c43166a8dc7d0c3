/**
 * Kubernetes' semver library at version 1 (k8s.io/apiserver/pkg/cel/library/semverlib.go,
 * 1.33): strict Semantic Versioning 2.0.0 (blang/semver's Parse), and with `true` a normalized
 * reading that drops a leading "v" and leading zeros and fills in missing parts.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { fail } from './errors.js';

const NUMBER = '(0|[1-9][0-9]*)';
const IDENTIFIER = '(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)';
const SEMVER = new RegExp(`^${NUMBER}\\.${NUMBER}\\.${NUMBER}(?:-(${IDENTIFIER}(?:\\.${IDENTIFIER})*))?(?:\\+([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?$`);

export class Semver {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: string[],
  ) {}
  /** CEL equality (inside lists, maps and sets.*): as `==`. */
  equals(other: Semver): boolean {
    return compare(this, other) === 0;
  }
}

function parse(text: string): Semver {
  const match = SEMVER.exec(text);
  if (!match) {
    if (!/^[0-9]+\.[0-9]+\.[0-9]+/.test(text)) fail('No Major.Minor.Patch elements found');
    fail(`Invalid semver "${text}"`);
  }
  return new Semver(BigInt(match[1]!), BigInt(match[2]!), BigInt(match[3]!), match[4] ? match[4].split('.') : []);
}

/** semverlib.go normalizeAndParse. */
function normalized(text: string): Semver {
  const parts = text.replace(/^v/, '').split('.');
  const head = parts.slice(0, 2);
  const rest = parts.slice(2).join('.');
  const all = rest === '' && parts.length < 3 ? head : [...head, rest];
  const trimmed = all.map((p) => {
    if (p.length <= 1) return p;
    const t = p.replace(/^0+/, '');
    return t.length === 0 || !/^[0-9]/.test(t) ? `0${t}` : t;
  });
  while (trimmed.length < 3) trimmed.push('0');
  return parse(trimmed.join('.'));
}

function comparePre(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return a.length === b.length ? 0 : a.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [x, y] = [a[i]!, b[i]!];
    const [nx, ny] = [/^[0-9]+$/.test(x), /^[0-9]+$/.test(y)];
    if (x === y) continue;
    if (nx && ny) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return Math.sign(a.length - b.length);
}

function compare(a: Semver, b: Semver): number {
  for (const key of ['major', 'minor', 'patch'] as const) if (a[key] !== b[key]) return a[key] < b[key] ? -1 : 1;
  return comparePre(a.pre, b.pre);
}

const succeeds = (read: () => unknown) => {
  try {
    read();
    return true;
  } catch {
    return false;
  }
};

export function registerSemver(env: Environment): void {
  env.registerType('kubernetes.Semver', Semver);
  env.registerFunction('semver(string): kubernetes.Semver', parse);
  env.registerFunction('semver(string, bool): kubernetes.Semver', (text: string, normalize: boolean) => (normalize ? normalized(text) : parse(text)));
  env.registerFunction('isSemver(string): bool', (text: string) => succeeds(() => parse(text)));
  env.registerFunction('isSemver(string, bool): bool', (text: string, normalize: boolean) => succeeds(() => (normalize ? normalized(text) : parse(text))));
  env.registerFunction('kubernetes.Semver.isGreaterThan(kubernetes.Semver): bool', (a: Semver, b: Semver) => compare(a, b) > 0);
  env.registerFunction('kubernetes.Semver.isLessThan(kubernetes.Semver): bool', (a: Semver, b: Semver) => compare(a, b) < 0);
  env.registerFunction('kubernetes.Semver.compareTo(kubernetes.Semver): int', (a: Semver, b: Semver) => BigInt(compare(a, b)));
  env.registerFunction('kubernetes.Semver.major(): int', (a: Semver) => a.major);
  env.registerFunction('kubernetes.Semver.minor(): int', (a: Semver) => a.minor);
  env.registerFunction('kubernetes.Semver.patch(): int', (a: Semver) => a.patch);
  env.registerOperator('kubernetes.Semver == kubernetes.Semver', (a: Semver, b: Semver) => compare(a, b) === 0);
}
