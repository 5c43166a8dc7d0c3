/**
 * What cel-go (and so Kubernetes) parses or checks that @marcbachmann/cel-js 8.0.0 does not,
 * added to its parser: optional entries in list and map literals (`[?x]`, `{?k: v}`, with
 * optional types enabled), `has()` on a field of any expression (`has(a.b[0].c)`), and int
 * overflow as an error where cel-js wraps silently (`-x`, `x / -1`, `x % -1` at the minimum,
 * `int(double)` out of range). The library has no parser hook, so its (shared) parser
 * prototype is extended once; each change only turns what was a parse error or a wrong value
 * into cel-go's answer. 8.0.0 is the newest release and its repository has nothing newer for
 * these (checked at its head, 2026-08).
 */
import { Optional } from '@marcbachmann/cel-js';
import { parserPrototype, TOKEN, type AstNode, type CelType, type Checker, type Evaluator, type Operator, type ParserInstance } from './internals.js';

const MIN_INT = -(2n ** 63n);
const TWO_TO_63 = 2 ** 63;

function overflow(ev: Evaluator, node: AstNode): never {
  throw ev.createError('numeric_overflow', 'integer overflow', node);
}

/** `?expr` inside a list or map literal; anywhere else it is a type error. */
const OPTIONAL_ENTRY: Operator = {
  name: 'optionalEntry',
  check(chk, node) {
    throw chk.createError('unexpected_optional', "an optional entry '?' is only allowed in a list or map literal", node);
  },
  evaluate() {
    throw new Error('unreachable: optional entry outside a literal');
  },
};

function isOptionalEntry(node: unknown): node is AstNode {
  return (node as AstNode | undefined)?.op === OPTIONAL_ENTRY.name;
}

/** The value type of an optional (or dyn) entry. */
function entryValueType(chk: Checker, entry: AstNode, ctx: unknown): CelType {
  const type = chk.check(entry, ctx);
  if (type.kind === 'optional') return type.valueType ?? chk.getType('dyn');
  if (type.kind === 'dyn') return type;
  throw chk.createError('optional_expected', `an optional entry must be an optional value, got '${chk.formatType(type)}'`, entry);
}

/** The element value an optional entry contributes, or undefined when it is absent. */
function present(ev: Evaluator, entry: AstNode, value: unknown): unknown {
  if (value instanceof Optional) return value.hasValue() ? value.value() : undefined;
  throw ev.createError('optional_expected', 'an optional entry must be an optional value', entry);
}

function join(chk: Checker, previous: CelType | undefined, next: CelType): CelType {
  if (previous === undefined) return next;
  return previous.unify(chk.registry, next) ?? chk.getType('dyn');
}

/** A list literal with at least one `?` element. Elements: plain nodes, or OPTIONAL_ENTRY nodes wrapping the optional. */
const OPTIONAL_LIST: Operator = {
  name: 'list',
  check(chk, node, ctx) {
    let elementType: CelType | undefined;
    for (const element of node.args as AstNode[]) {
      const type = isOptionalEntry(element) ? entryValueType(chk, element.args as AstNode, ctx) : chk.check(element, ctx);
      elementType = join(chk, elementType, type);
    }
    return chk.registry.getListType(elementType ?? chk.getType('dyn'));
  },
  evaluate(ev, node, ctx) {
    const result: unknown[] = [];
    for (const element of node.args as AstNode[]) {
      if (!isOptionalEntry(element)) {
        result.push(ev.run(element, ctx));
        continue;
      }
      const inner = element.args as AstNode;
      const value = present(ev, inner, ev.run(inner, ctx));
      if (value !== undefined) result.push(value);
    }
    return result;
  },
};

type Entry = [AstNode, AstNode];

/** A map literal with at least one `?key: optional` entry. */
const OPTIONAL_MAP: Operator = {
  name: 'map',
  check(chk, node, ctx) {
    let keyType: CelType | undefined;
    let valueType: CelType | undefined;
    for (const [key, value] of node.args as Entry[]) {
      if (isOptionalEntry(key)) {
        keyType = join(chk, keyType, chk.check(key.args as AstNode, ctx));
        valueType = join(chk, valueType, entryValueType(chk, value, ctx));
      } else {
        keyType = join(chk, keyType, chk.check(key, ctx));
        valueType = join(chk, valueType, chk.check(value, ctx));
      }
    }
    return chk.registry.getMapType(keyType ?? chk.getType('dyn'), valueType ?? chk.getType('dyn'));
  },
  evaluate(ev, node, ctx) {
    const result: Record<string, unknown> = {};
    for (const [key, value] of node.args as Entry[]) {
      const optional = isOptionalEntry(key);
      const name = ev.run(optional ? (key.args as AstNode) : key, ctx);
      const item = optional ? present(ev, value, ev.run(value, ctx)) : ev.run(value, ctx);
      if (item === undefined) continue;
      if (name === '__proto__' || name === 'constructor' || name === 'prototype') continue;
      result[String(name)] = item;
    }
    return result;
  },
};

/**
 * cel-go's has(): the argument is a field selection `e.f` on any expression; `e` is evaluated as
 * usual (its errors are errors) and the result says whether `f` is present on it.
 */
function kubernetesHas(argument: AstNode) {
  return {
    typeCheck(chk: Checker, _macro: unknown, ctx: unknown): CelType {
      if (argument.op !== '.') throw chk.createError('invalid_macro_argument', 'invalid argument to has() macro', argument);
      chk.check((argument.args as [AstNode, string])[0], ctx);
      return chk.getType('bool');
    },
    evaluate(ev: Evaluator & { debugType(v: unknown): { fieldLazy(v: unknown, f: string, n: AstNode, e: unknown): unknown } }, _macro: unknown, ctx: unknown): boolean {
      const [target, field] = argument.args as [AstNode, string];
      const value = ev.run(target, ctx);
      if (value === null || value === undefined) throw ev.createError('no_such_field', `no such key: ${field}`, argument);
      return ev.debugType(value).fieldLazy(value, field, argument, ev) !== undefined;
    },
    async: false,
  };
}

/** Wraps the handler the checker picks for `node`, so operands can be refused before it runs. */
function guardHandle(node: AstNode, guard: (operands: unknown[], ev: Evaluator) => void, operandsOf: (args: unknown[]) => unknown[]): void {
  const check = node.meta.check;
  node.setMeta('check', (chk: Checker, self: AstNode, ctx: unknown) => {
    const type = check(chk, self, ctx);
    const handle = self.handle;
    if (handle) {
      self.handle = (...args: unknown[]) => {
        const operands = operandsOf(args);
        if (!operands.some((o) => o instanceof Promise)) guard(operands, args.find(isEvaluator) ?? (undefined as never));
        return handle(...args);
      };
    }
    return type;
  });
}

function isEvaluator(value: unknown): value is Evaluator {
  return typeof (value as Evaluator | undefined)?.run === 'function';
}

function guardNegation(node: AstNode): void {
  guardHandle(
    node,
    ([value], ev) => {
      if (value === MIN_INT) overflow(ev, node);
    },
    (args) => [args[0]],
  );
}

function guardDivision(node: AstNode): void {
  guardHandle(
    node,
    ([left, right], ev) => {
      if (left === MIN_INT && right === -1n) overflow(ev, node);
    },
    (args) => [args[0], args[1]],
  );
}

function guardIntConversion(node: AstNode): void {
  guardHandle(
    node,
    ([value], ev) => {
      if (typeof value === 'number' && !(value > -TWO_TO_63 && value < TWO_TO_63)) overflow(ev, node);
    },
    (args) => (Array.isArray(args[0]) ? (args[0] as unknown[]) : []),
  );
}

/** Guards every `/` and `%` on the left spine of a multiplicative chain (`a / b % c`). */
function guardMultiplicative(node: AstNode): void {
  let current: AstNode | undefined = node;
  while (current && (current.op === '*' || current.op === '/' || current.op === '%')) {
    if (current.op !== '*') guardDivision(current);
    current = (current.args as AstNode[])[0];
  }
}

let installed = false;

/** Extends the library's parser once per process; idempotent. */
export function installSyntaxExtensions(): void {
  if (installed) return;
  installed = true;
  const proto = parserPrototype;
  const { parsePrimary, parseUnary, parseMultiplicative, parseList, parseMap } = proto;

  proto.parsePrimary = function (this: ParserInstance) {
    if (this.type === TOKEN.QUESTION && this.registry.enableOptionalTypes) {
      const at = this.consume(TOKEN.QUESTION);
      const inner = this.parseExpression();
      const entry = inner.clone(OPTIONAL_ENTRY, inner);
      entry.start = at;
      entry.pos = at;
      return entry;
    }
    const node = parsePrimary.call(this);
    if (node.op === 'call' && Array.isArray(node.args)) {
      const [name, args] = node.args as [string, AstNode[]];
      if (name === 'has' && args.length === 1 && node.meta.macro) node.setMeta('macro', kubernetesHas(args[0]!));
      if (name === 'int' && args.length === 1) guardIntConversion(node);
    }
    return node;
  };

  proto.parseUnary = function (this: ParserInstance) {
    const node = parseUnary.call(this);
    if (node.op === '-_') guardNegation(node);
    return node;
  };

  proto.parseMultiplicative = function (this: ParserInstance) {
    const node = parseMultiplicative.call(this);
    guardMultiplicative(node);
    return node;
  };

  proto.parseList = function (this: ParserInstance) {
    const node = parseList.call(this);
    return (node.args as AstNode[]).some(isOptionalEntry) ? node.clone(OPTIONAL_LIST, node.args) : node;
  };

  proto.parseMap = function (this: ParserInstance) {
    const node = parseMap.call(this);
    const entries = node.args as Entry[];
    for (const [, value] of entries) {
      if (isOptionalEntry(value)) throw Object.assign(new SyntaxError("an optional map entry is written '?key: value'"), { range: { start: value.start, end: value.end } });
    }
    return entries.some(([key]) => isOptionalEntry(key)) ? node.clone(OPTIONAL_MAP, node.args) : node;
  };
}
