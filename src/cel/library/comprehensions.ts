/**
 * cel-go's ext.TwoVarComprehensions (Kubernetes 1.32): `all`, `exists`, `existsOne` (also
 * `exists_one`) with an index (list) or key (map) and a value variable, and `transformList`,
 * `transformMap`, `transformMapEntry` with an optional filter. Errors in `all`/`exists` are
 * absorbed when another element decides (as CEL's && and ||), as in cel-go.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { AstNode, CelType, Checker, Evaluator } from '../engine/internals.js';
import { celEquals } from './equality.js';
import { fail } from './errors.js';
import { identifier, Scope, type Context, type MacroCall } from './bound-evaluation.js';

type Pair = [unknown, unknown];

function pairsOf(value: unknown): Pair[] {
  if (Array.isArray(value)) return value.map((item, i) => [BigInt(i), item]);
  if (value instanceof Map) return [...value.entries()];
  if (typeof value === 'object' && value !== null) return Object.entries(value);
  return fail(`expression of type '${typeof value}' cannot be range of a comprehension (must be list or map)`);
}

function rangeTypes(chk: Checker, receiver: AstNode, ctx: unknown): CelType[] {
  const type = chk.check(receiver, ctx);
  const dyn = chk.getType('dyn');
  if (type.kind === 'list') return [chk.getType('int'), type.valueType ?? dyn];
  if (type.kind === 'map') return [type.keyType ?? dyn, type.valueType ?? dyn];
  if (type.kind === 'dyn') return [dyn, dyn];
  throw chk.createError('invalid_comprehension_range', `expression of type '${chk.formatType(type)}' cannot be range of a comprehension (must be list, map, or dynamic)`, receiver);
}

interface Loop {
  scope: Scope;
  receiver: AstNode;
  filter?: AstNode;
  body: AstNode;
}

function loopOf(call: MacroCall, what: string): Loop {
  const [first, second, ...rest] = call.args;
  const scope = new Scope([identifier(first!, what), identifier(second!, what)]);
  const body = rest.at(-1)!;
  return rest.length === 2 ? { scope, receiver: call.receiver, filter: rest[0]!, body } : { scope, receiver: call.receiver, body };
}

function checkLoop(chk: Checker, loop: Loop, ctx: unknown): CelType {
  const scope = loop.scope.check(ctx as Context, rangeTypes(chk, loop.receiver, ctx));
  if (loop.filter) {
    const type = chk.check(loop.filter, scope);
    if (type.name !== 'bool' && type.kind !== 'dyn') throw chk.createError('invalid_predicate', 'the filter must be a bool', loop.filter);
  }
  return chk.check(loop.body, scope);
}

type Quantifier = 'all' | 'exists' | 'existsOne';

function quantifier(kind: Quantifier) {
  return (call: MacroCall) => {
    const loop = loopOf(call, kind);
    return {
      typeCheck(chk: Checker, _m: unknown, ctx: unknown): CelType {
        const type = checkLoop(chk, loop, ctx);
        if (type.name !== 'bool' && type.kind !== 'dyn') throw chk.createError('invalid_predicate', `${kind}() predicate must return bool`, loop.body);
        return chk.getType('bool');
      },
      evaluate(ev: Evaluator, _m: unknown, ctx: unknown): boolean {
        let error: unknown;
        let count = 0;
        for (const [k, v] of pairsOf(ev.run(loop.receiver, ctx))) {
          let result: unknown;
          try {
            result = loop.scope.run(ev, ctx as Context, loop.body, [k, v]);
          } catch (caught) {
            if (kind === 'existsOne') throw caught;
            error ??= caught;
            continue;
          }
          if (typeof result !== 'boolean') throw ev.createError('invalid_predicate', `${kind}() predicate must return bool`, loop.body);
          if (kind === 'all' && !result) return false;
          if (kind === 'exists' && result) return true;
          if (kind === 'existsOne' && result) count++;
        }
        if (error) throw error;
        return kind === 'existsOne' ? count === 1 : kind === 'all';
      },
      async: false,
      chargesSteps: true,
    };
  };
}

type Transform = 'transformList' | 'transformMap' | 'transformMapEntry';

function passes(ev: Evaluator, ctx: unknown, loop: Loop, pair: Pair): boolean {
  if (!loop.filter) return true;
  const keep = loop.scope.run(ev, ctx as Context, loop.filter, pair);
  if (typeof keep !== 'boolean') throw ev.createError('invalid_predicate', 'the filter must be a bool', loop.filter);
  return keep;
}

function mapKey(key: unknown): string {
  return typeof key === 'string' ? key : String(key);
}

function transform(kind: Transform) {
  return (call: MacroCall) => {
    const loop = loopOf(call, kind);
    return {
      typeCheck(chk: Checker, _m: unknown, ctx: unknown): CelType {
        const body = checkLoop(chk, loop, ctx);
        const [keyType] = rangeTypes(chk, loop.receiver, ctx);
        if (kind === 'transformList') return chk.registry.getListType(body);
        if (kind === 'transformMap') return chk.registry.getMapType(keyType!, body);
        if (body.kind !== 'map' && body.kind !== 'dyn') throw chk.createError('invalid_transform', 'transformMapEntry() must produce a map', loop.body);
        return body.kind === 'map' ? body : chk.getType('map');
      },
      evaluate(ev: Evaluator, _m: unknown, ctx: unknown): unknown {
        const pairs = pairsOf(ev.run(loop.receiver, ctx));
        if (kind === 'transformList') return pairs.filter((p) => passes(ev, ctx, loop, p)).map((p) => loop.scope.run(ev, ctx as Context, loop.body, p));
        const result = new Map<unknown, unknown>();
        for (const pair of pairs) {
          if (!passes(ev, ctx, loop, pair)) continue;
          const value = loop.scope.run(ev, ctx as Context, loop.body, pair);
          if (kind === 'transformMap') {
            result.set(pair[0], value);
            continue;
          }
          for (const [key, item] of pairsOf(value)) {
            if ([...result.keys()].some((existing) => celEquals(existing, key))) fail(`insert failed: key ${mapKey(key)} already exists`);
            result.set(key, item);
          }
        }
        return [...result.keys()].every((k) => typeof k === 'string') ? Object.fromEntries([...result].map(([k, v]) => [mapKey(k), v])) : result;
      },
      async: false,
      chargesSteps: true,
    };
  };
}

/** Macros are found by name and argument count, whatever the receiver (a map too), as the library's own. */
export function registerTwoVariableComprehensions(env: Environment): void {
  const macros: [string, (call: MacroCall) => unknown][] = [
    ['all(ast, ast, ast): bool', quantifier('all')],
    ['exists(ast, ast, ast): bool', quantifier('exists')],
    ['existsOne(ast, ast, ast): bool', quantifier('existsOne')],
    ['exists_one(ast, ast, ast): bool', quantifier('existsOne')],
    ['transformList(ast, ast, ast): list<dyn>', transform('transformList')],
    ['transformList(ast, ast, ast, ast): list<dyn>', transform('transformList')],
    ['transformMap(ast, ast, ast): map<dyn, dyn>', transform('transformMap')],
    ['transformMap(ast, ast, ast, ast): map<dyn, dyn>', transform('transformMap')],
    ['transformMapEntry(ast, ast, ast): map<dyn, dyn>', transform('transformMapEntry')],
    ['transformMapEntry(ast, ast, ast, ast): map<dyn, dyn>', transform('transformMapEntry')],
  ];
  for (const [signature, macro] of macros) env.registerFunction(`list.${signature}`, macro as (...args: unknown[]) => unknown);
}
