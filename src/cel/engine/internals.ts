/**
 * The parts of @marcbachmann/cel-js (8.0.0, pinned) that the syntax and checker extensions rely on
 * and the package does not export: its parser and AST node classes, and the shape of its AST
 * nodes and checker.
 * test/policy-cel-kubernetes-library.test.ts (optional literals, has() on indexes, overflow) and
 * test/policy-cel-type-checking.test.ts fail when an upgrade changes them.
 */

export interface CelType {
  name: string;
  /** dyn, param (a type parameter), primitive, message, list, map or optional. */
  kind: string;
  valueType?: CelType;
  keyType?: CelType;
  hasDynType?: boolean;
  unify(registry: unknown, other: CelType): CelType | undefined;
}

export interface Checker {
  registry: { getListType(t: CelType): CelType; getMapType(k: CelType, v: CelType): CelType; enableOptionalTypes?: boolean };
  check(node: AstNode, ctx: unknown): CelType;
  getType(name: string): CelType;
  createError(code: string, message: string, node: AstNode): Error;
  formatType(type: CelType): string;
}

export interface Evaluator {
  run(node: AstNode, ctx: unknown): unknown;
  createError(code: string, message: string, node: AstNode): Error;
}

export type Check = (chk: Checker, node: AstNode, ctx: unknown) => CelType;
export type Evaluate = (ev: Evaluator, node: AstNode, ctx: unknown) => unknown;

/** An operator as the parser builds nodes from it. */
export interface Operator {
  name: string;
  check: Check;
  evaluate: Evaluate;
}

export interface AstNode {
  op: string;
  args: unknown;
  pos: number;
  start: number;
  end: number;
  checkedType?: CelType;
  /** Set by the checker: the function that computes the node from its evaluated operands. */
  handle?: (...args: unknown[]) => unknown;
  readonly meta: { check: Check; evaluate: Evaluate; alternate?: AstNode; macro?: unknown };
  /** A binary operator's overloads, set by the checker (`declarations` as registered). */
  candidates?: { declarations: OperatorDeclaration[] };
  /** A binary operator's operands, set by the checker. */
  left?: AstNode;
  right?: AstNode;
  clone(op: Operator, args: unknown): AstNode;
  setMeta(key: string, value: unknown): AstNode;
}

/** One registered overload of a binary operator: `list<V> + list<V>: list<V>`. */
export interface OperatorDeclaration {
  leftType: CelType;
  rightType: CelType;
  returnType: CelType;
  hasPlaceholderType: boolean;
}

/** The AST node class: every node's check(chk, node, ctx) is its prototype's, which dispatches to the node's meta. */
export interface AstNodePrototype {
  check(this: AstNode, chk: Checker, node: AstNode, ctx: unknown): CelType;
}

export interface ParserInstance {
  type: number;
  pos: number;
  registry: { enableOptionalTypes?: boolean };
  consume(token: number): number;
  parseExpression(): AstNode;
}

export interface ParserPrototype extends ParserInstance {
  parsePrimary(this: ParserInstance): AstNode;
  parseUnary(this: ParserInstance): AstNode;
  parseMultiplicative(this: ParserInstance): AstNode;
  parseList(this: ParserInstance): AstNode;
  parseMap(this: ParserInstance): AstNode;
}

/** The parser's token numbers this module needs (lib/parser.js TOKEN). */
export const TOKEN = { QUESTION: 30 } as const;

const entry = import.meta.resolve('@marcbachmann/cel-js');
const parserModule = (await import(new URL('./parser.js', entry).href)) as { Parser: { prototype: ParserPrototype }; ASTNode: { prototype: AstNodePrototype } };

/** The one parser prototype every Environment's parser shares. */
export const parserPrototype: ParserPrototype = parserModule.Parser.prototype;

/** The one AST node prototype every parsed node shares. */
export const astNodePrototype: AstNodePrototype = parserModule.ASTNode.prototype;
