/**
 * matchConditions compiled as the kube-apiserver this double claims to be compiles them on a write
 * of a webhook configuration (pkg/apis/admissionregistration/validation: validateMatchCondition,
 * and the CEL base environment of staging/src/k8s.io/apiserver/pkg/cel/environment/base.go):
 * - a new expression gets the NewExpressions environment, whose libraries are those of the
 *   compatibility version, one minor below the binary's (ip() is new in 1.30: a 1.30 kube-apiserver
 *   refuses it in a new expression, 1.31 takes it); an expression the stored object already has
 *   (in any of its webhooks) gets the StoredExpressions one, every library of the binary;
 * - a syntax error, a library the environment lacks, or a result that is not a bool is an Invalid
 *   field error on `...expression`, detail `compilation failed: ERROR: <input>:L:C: ...` (or
 *   `must evaluate to bool but got T`), answered 422 by the caller.
 * The double's own CEL (@marcbachmann/cel-js), never the server's. Where the library cannot tell
 * (a type check it cannot do, as two-variable comprehensions), the double accepts: it must never
 * refuse what kube-apiserver takes. Syntax errors keep kube's layout; their wording is the library's.
 */
import { Environment, ParseError, type ASTNode } from '@marcbachmann/cel-js';

/** The minor version that brought each library's functions into the base environment. */
const GLOBAL_FUNCTIONS: Readonly<Record<string, number>> = {
  quantity: 28,
  isQuantity: 28,
  ip: 30,
  isIP: 30,
  cidr: 30,
  isCIDR: 30,
  semver: 33,
  isSemver: 33,
};

/** Receiver-style functions of the same libraries (Quantity, strings v2's list join, IP, CIDR, Semver). */
const MEMBER_FUNCTIONS: Readonly<Record<string, number>> = {
  isInteger: 28,
  asInteger: 28,
  asApproximateFloat: 28,
  sign: 28,
  add: 28,
  sub: 28,
  isGreaterThan: 28,
  isLessThan: 28,
  compareTo: 28,
  join: 29,
  family: 30,
  isUnspecified: 30,
  isLoopback: 30,
  isLinkLocalMulticast: 30,
  isLinkLocalUnicast: 30,
  isGlobalUnicast: 30,
  containsIP: 30,
  containsCIDR: 30,
  masked: 30,
  prefixLength: 30,
  major: 33,
  minor: 33,
  patch: 33,
};

/** Functions called on a namespace identifier: `sets.contains(...)`, `strings.quote(...)`, `optional.of(...)`, `format.dns1123Label()`. */
const NAMESPACES: Readonly<Record<string, number>> = { optional: 28, sets: 29, strings: 29, format: 31 };

/** Macros that take two variables from 1.32 (ext.TwoVarComprehensions). */
const TWO_VARIABLE_MACROS = new Set(['all', 'exists', 'existsOne']);
const TRANSFORM_MACROS = new Set(['transformList', 'transformMap', 'transformMapEntry']);
const TWO_VARIABLE_SINCE = 32;
/** Optional field selection (`a.?b`, `a[?k]`), with cel.OptionalTypes() in 1.28. */
const OPTIONAL_SINCE = 28;

const ENV = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false })
  .registerVariable('object', 'dyn')
  .registerVariable('oldObject', 'dyn')
  .registerVariable('request', 'dyn')
  .registerVariable('authorizer', 'dyn');

export type ExpressionAge = 'new' | 'stored';

interface Found {
  name: string;
  since: number;
  pos: number;
}

const isNode = (value: unknown): value is ASTNode => typeof value === 'object' && value !== null && 'op' in value;

/**
 * Every construct of `node` that a library brought, with the minor version that brought it,
 * innermost first: cel-go's checker reports the receiver's error, not the member call's on it.
 */
function libraryUses(node: ASTNode, found: Found[] = []): Found[] {
  const { op, args } = node as unknown as { op: string; args: unknown };
  const pos = (node as unknown as { pos: number }).pos;
  for (const child of [args].flat(2)) if (isNode(child)) libraryUses(child, found);
  if (op === 'call') {
    const [name] = args as [string, ASTNode[]];
    const since = GLOBAL_FUNCTIONS[name];
    if (since !== undefined) found.push({ name, since, pos });
  } else if (op === 'rcall') {
    const [name, receiver, callArgs] = args as [string, ASTNode, ASTNode[]];
    const receiverOp = (receiver as unknown as { op: string; args: unknown }).op;
    const namespace = receiverOp === 'id' ? String((receiver as unknown as { args: unknown }).args) : undefined;
    const namespaceSince = namespace === undefined ? undefined : NAMESPACES[namespace];
    if (namespaceSince !== undefined) found.push({ name: `${namespace}.${name}`, since: namespaceSince, pos });
    else if (MEMBER_FUNCTIONS[name] !== undefined) found.push({ name, since: MEMBER_FUNCTIONS[name], pos });
    else if ((TWO_VARIABLE_MACROS.has(name) && callArgs.length === 3) || TRANSFORM_MACROS.has(name)) found.push({ name, since: TWO_VARIABLE_SINCE, pos });
  } else if (op === '.?' || op === '[?]') {
    found.push({ name: 'optional', since: OPTIONAL_SINCE, pos });
  }
  return found;
}

/** cel-go's error layout: `ERROR: <input>:line:column: message`, the line, a caret under the column. */
function celError(expression: string, pos: number, message: string): string {
  const before = expression.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - (before.lastIndexOf('\n') + 1);
  const text = expression.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${text}\n | ${'.'.repeat(column)}^`;
}

/**
 * What the kube-apiserver of `minor` says about `expression` (already trimmed), or undefined when
 * it compiles. `age`: new expressions get the compatibility version's libraries, stored ones all.
 */
export function matchConditionProblem(expression: string, minor: number, age: ExpressionAge): string | undefined {
  let parsed;
  try {
    parsed = ENV.parse(expression);
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    const pos = (error.range?.start ?? 0);
    return `compilation failed: ${celError(expression, pos, `Syntax error: ${error.message.split('\n')[0]}`)}`;
  }
  const available = age === 'stored' ? minor : minor - 1;
  const missing = libraryUses(parsed.ast).find((use) => use.since > available);
  if (missing) {
    const name = missing.name === 'optional' ? 'optional field selection' : missing.name;
    return `compilation failed: ${celError(expression, missing.pos, `undeclared reference to '${name}' (in container '')`)}`;
  }
  const checked = parsed.check();
  if (checked.valid && checked.type !== undefined && checked.type !== 'bool' && checked.type !== 'dyn') {
    return `must evaluate to bool but got ${checked.type}`;
  }
  return undefined;
}
