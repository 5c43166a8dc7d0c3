/**
 * Checks kube-apiserver runs on a type-checked expression besides the type checker itself
 * (k8s.io/apiserver/pkg/cel/environment/base.go):
 * - every version: cel.HomogeneousAggregateLiterals(): the elements of a list literal (keys and
 *   values of a map literal) must be assignable to each other (`[1, 'a']` is refused, `[1, x]`
 *   with a dyn `x` is not);
 * - from 1.29, cel.ValidateHomogeneousAggregateLiterals(): they must be of the same type exactly
 *   (`[1, x]` is refused too), except inside a `format()` call; and
 *   cel.ValidateDurationLiterals() / ValidateTimestampLiterals(): a constant argument of
 *   `duration()` / `timestamp()` must be valid;
 * - before 1.28 (no cel.CrossTypeNumericComparisons), `<`, `<=`, `>`, `>=` only between values of
 *   the same numeric type;
 * - from 1.29, with ext.Strings and ext.Sets: literal `format()` strings against their arguments
 *   (format-calls.ts) and `sets.*` on lists of one element type (sets-calls.ts).
 */
import { formatCallProblem } from './format-calls.js';
import type { AstNode, CelType } from './internals.js';
import { setsCallProblem } from './sets-calls.js';
import { assignable, sameType } from './type-relations.js';

export type HomogeneousMode = 'assignable' | 'exact';

export interface LiteralRules {
  homogeneous: HomogeneousMode;
  validateTimeLiterals: boolean;
  /** cel.CrossTypeNumericComparisons (1.28): `1 < 1.5` compiles. */
  crossTypeNumericComparisons: boolean;
  /** ext.Strings v2 and ext.Sets (1.29): format() calls and sets.* arguments are checked. */
  validateExtensionCalls: boolean;
}

export interface LiteralProblem {
  message: string;
  node: AstNode;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as AstNode).op === 'string' && 'meta' in value;
}

function children(node: AstNode): unknown[] {
  const { args } = node;
  const list = Array.isArray(args) ? args.flat() : typeof args === 'object' && args !== null && !isNode(args) ? Object.values(args) : [args];
  if (node.meta.alternate) list.push(node.meta.alternate);
  return list;
}

function typeName(type: CelType | undefined): string {
  return type?.name ?? 'dyn';
}

interface Item {
  type: CelType | undefined;
  node: AstNode;
}

/** An optional entry (`?x`, or the value of `?k: v`) contributes its optional's value type. */
function unwrapped(node: AstNode, optional: boolean): Item {
  const type = node.checkedType;
  return { node, type: optional && type?.kind === 'optional' ? type.valueType : type };
}

function firstMismatch(items: Item[], mode: HomogeneousMode): LiteralProblem | undefined {
  let expected: CelType | undefined;
  for (const { type, node } of items) {
    if (!type) continue;
    if (!expected) {
      expected = type;
      continue;
    }
    const same = mode === 'exact' ? sameType(expected, type) : assignable(expected, type);
    if (!same) return { message: `expected type '${typeName(expected)}' but found '${typeName(type)}'`, node };
  }
  return undefined;
}

const OPTIONAL_ENTRY = 'optionalEntry';

function literalProblem(node: AstNode, mode: HomogeneousMode): LiteralProblem | undefined {
  if (node.op === 'list') {
    return firstMismatch(
      (node.args as AstNode[]).map((e) => (e.op === OPTIONAL_ENTRY ? unwrapped(e.args as AstNode, true) : unwrapped(e, false))),
      mode,
    );
  }
  if (node.op !== 'map') return undefined;
  const entries = node.args as [AstNode, AstNode][];
  const keys = entries.map(([k]) => (k.op === OPTIONAL_ENTRY ? unwrapped(k.args as AstNode, false) : unwrapped(k, false)));
  const values = entries.map(([k, v]) => unwrapped(v, k.op === OPTIONAL_ENTRY));
  return firstMismatch(keys, mode) ?? firstMismatch(values, mode);
}

function timeLiteralProblem(node: AstNode): LiteralProblem | undefined {
  if (node.op !== 'call') return undefined;
  const [name, args] = node.args as [string, AstNode[]];
  if ((name !== 'duration' && name !== 'timestamp') || args.length !== 1 || args[0]!.op !== 'value' || typeof args[0]!.args !== 'string') return undefined;
  const text = args[0]!.args;
  const valid = name === 'duration' ? isDuration(text) : isTimestamp(text);
  return valid ? undefined : { message: `invalid ${name} argument`, node: args[0]! };
}

/** Go's time.ParseDuration syntax, as cel-go's duration() reads it. */
function isDuration(text: string): boolean {
  return /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(text) || text === '0';
}

/** RFC 3339, as cel-go's timestamp() reads it, within its range (years 1 to 9999). */
function isTimestamp(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.exec(text);
  if (!match) return false;
  const [, year, month, day, hour, minute, second] = match.map(Number) as number[];
  const date = new Date(Date.UTC(year!, month! - 1, day!));
  date.setUTCFullYear(year!);
  return year! >= 1 && date.getUTCMonth() === month! - 1 && date.getUTCDate() === day! && hour! < 24 && minute! < 60 && second! < 60;
}

const NUMERIC = new Set(['int', 'uint', 'double']);
const ORDERING = new Set(['<', '<=', '>', '>=']);

function crossTypeComparison(node: AstNode): LiteralProblem | undefined {
  if (!ORDERING.has(node.op)) return undefined;
  const [left, right] = (node.args as AstNode[]).map((a) => a.checkedType?.name ?? 'dyn');
  if (!NUMERIC.has(left!) || !NUMERIC.has(right!) || left === right) return undefined;
  return { message: `found no matching overload for '_${node.op}_' applied to '(${left}, ${right})'`, node };
}

/** The first literal problem of a checked expression under `rules`, or undefined. */
export function literalProblemOf(root: unknown, rules: LiteralRules): LiteralProblem | undefined {
  const seen = new Set<AstNode>();
  let problem: LiteralProblem | undefined;
  const visit = (value: unknown, exempt: boolean): void => {
    if (problem || !isNode(value) || seen.has(value)) return;
    seen.add(value);
    const inFormat = exempt || (rules.homogeneous === 'exact' && value.op === 'rcall' && (value.args as [string])[0] === 'format');
    if (!inFormat) problem = literalProblem(value, rules.homogeneous);
    if (!problem && rules.validateTimeLiterals) problem = timeLiteralProblem(value);
    if (!problem && !rules.crossTypeNumericComparisons) problem = crossTypeComparison(value);
    if (!problem && rules.validateExtensionCalls) problem = formatCallProblem(value) ?? setsCallProblem(value);
    for (const child of children(value)) visit(child, inFormat);
  };
  visit(root, false);
  return problem;
}
