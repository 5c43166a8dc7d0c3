/**
 * What cel-go's type checker accepts or infers that @marcbachmann/cel-js 8.0.0 checks otherwise,
 * added where every node is checked (the AST node class's check, which the package does not
 * export; loaded from the pinned package like the parser):
 * - `==` and `!=`: cel-go declares them once, `_==_(A, A) -> bool`, for every type; cel-js
 *   declares them type by type and has none for some (a URL, an optional against `null`). Where
 *   it has none, two operands that unify as one A (type-relations.ts) are compared with CEL
 *   equality, as cel-go does; others stay refused (`url(a) == 1`, `1 == null`).
 * - a type parameter an operator binds twice takes the more general of the two types
 *   (`[1] + [dyn('a')]` is a list(dyn) in cel-go; cel-js kept the first, list<int>, and then
 *   refused `([1] + [dyn('a')])[1] == 'a'`). No function of the library binds one twice.
 * - qualified identifiers: `a.b.c` names the identifier declared with that dotted name when there
 *   is one, the longest first, before it is read as field selections (cel-go's checkSelect), so
 *   `net.IP` is the type identifier Kubernetes declares and `net` alone stays undeclared.
 */
import { celEquals } from '../library/equality.js';
import { astNodePrototype, type AstNode, type CelType, type Checker, type Operator } from './internals.js';
import { isAssignable, substitute, termOf, typeText, type Mapping, type Term } from './type-relations.js';

interface CheckContext {
  getVariable(name: string): unknown;
}

type OriginalCheck = (this: AstNode, chk: Checker, node: AstNode, ctx: unknown) => CelType;

const EQUALITY_PARAM: Term = { kind: 'param', name: '=A', params: [] };

/** `left` and `right` are assignable to one type parameter A: `_==_(A, A)` applies. */
function unifyAsOne(left: CelType, right: CelType): boolean {
  const m: Mapping = new Map();
  return isAssignable(m, termOf(left), EQUALITY_PARAM) && isAssignable(m, termOf(right), EQUALITY_PARAM);
}

function isNoSuchOverload(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'no_such_overload';
}

function checkEquality(original: OriginalCheck, node: AstNode, chk: Checker, ctx: unknown): CelType {
  try {
    return original.call(node, chk, node, ctx);
  } catch (error) {
    const [left, right] = [node.left?.checkedType, node.right?.checkedType];
    if (!isNoSuchOverload(error) || !left || !right || !unifyAsOne(left, right)) throw error;
    const equal = node.op === '==';
    node.handle = (a: unknown, b: unknown) => celEquals(a, b) === equal;
    return chk.getType('bool');
  }
}

/** An operator's own parameters, renamed so they never meet a free parameter of an operand. */
const fresh = (name: string) => `${name}'`;

/** cel-go's result type for a binary operator whose one matching overload is generic, or undefined. */
function generalResult(node: AstNode, left: CelType, right: CelType): string | undefined {
  const declarations = node.candidates?.declarations ?? [];
  if (left.kind === 'dyn' || right.kind === 'dyn' || !declarations.some((decl) => decl.hasPlaceholderType)) return undefined;
  const matching = declarations.filter((decl) => {
    const m: Mapping = new Map();
    return isAssignable(m, termOf(left), termOf(decl.leftType, fresh)) && isAssignable(m, termOf(right), termOf(decl.rightType, fresh));
  });
  const [decl] = matching;
  if (matching.length !== 1 || !decl?.hasPlaceholderType) return undefined;
  const m: Mapping = new Map();
  isAssignable(m, termOf(left), termOf(decl.leftType, fresh));
  isAssignable(m, termOf(right), termOf(decl.rightType, fresh));
  // A parameter nothing bound keeps its letter, as cel-js leaves it.
  return typeText(substitute(m, termOf(decl.returnType, fresh)), (name) => (name.endsWith("'") ? name.slice(0, -1) : name));
}

function checkGenericOperator(original: OriginalCheck, node: AstNode, chk: Checker, ctx: unknown): CelType {
  const type = original.call(node, chk, node, ctx);
  const [left, right] = [node.left?.checkedType, node.right?.checkedType];
  const general = left && right ? generalResult(node, left, right) : undefined;
  return general === undefined || general === type.name ? type : chk.getType(general);
}

/** `a.b.c` as the dotted name it spells, when it is identifiers and field selections only. */
function qualifiedName(node: AstNode): string | undefined {
  if (node.op === 'id') return typeof node.args === 'string' ? node.args : undefined;
  if (node.op !== '.') return undefined;
  const [target, field] = node.args as [AstNode, unknown];
  const prefix = qualifiedName(target);
  return prefix === undefined || typeof field !== 'string' ? undefined : `${prefix}.${field}`;
}

function rootIdentifier(node: AstNode): AstNode {
  return node.op === 'id' ? node : rootIdentifier((node.args as [AstNode])[0]);
}

function checkSelection(original: OriginalCheck, node: AstNode, chk: Checker, ctx: unknown): CelType {
  const name = qualifiedName(node);
  if (name === undefined || !(ctx as CheckContext).getVariable(name)) return original.call(node, chk, node, ctx);
  const root = rootIdentifier(node);
  const identifier: Operator = { name: 'id', check: root.meta.check, evaluate: root.meta.evaluate };
  node.setMeta('alternate', node.clone(identifier, name));
  return original.call(node, chk, node, ctx);
}

const GENERIC_OPERATORS = new Set(['+', '-', '*', '/', '%', '<', '<=', '>', '>=', 'in']);

let installed = false;

/** Extends the library's checker once per process; idempotent. */
export function installCheckerExtensions(): void {
  if (installed) return;
  installed = true;
  const original = astNodePrototype.check as OriginalCheck;
  astNodePrototype.check = function (this: AstNode, chk: Checker, node: AstNode, ctx: unknown): CelType {
    if (this.meta.alternate || this.meta.macro) return original.call(this, chk, node, ctx);
    if (this.op === '==' || this.op === '!=') return checkEquality(original, this, chk, ctx);
    if (this.op === '.') return checkSelection(original, this, chk, ctx);
    if (GENERIC_OPERATORS.has(this.op)) return checkGenericOperator(original, this, chk, ctx);
    return original.call(this, chk, node, ctx);
  };
}
