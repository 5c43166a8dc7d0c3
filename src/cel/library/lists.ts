/** cel-go's ext.Lists at version 3 (Kubernetes 1.34): lists.range, slice, flatten, sort, sortBy, distinct, reverse. */
import type { Environment } from '@marcbachmann/cel-js';
import type { AstNode, CelType, Checker, Evaluator } from '../engine/internals.js';
import { identifier, Scope, type Context, type MacroCall } from './bound-evaluation.js';
import { celEquals } from './equality.js';
import { fail, namespaceType } from './errors.js';
import { compareValues } from './ordering.js';

function slice(list: unknown[], start: bigint, end: bigint): unknown[] {
  if (start < 0n || end < 0n) fail(`cannot slice(${start}, ${end}), negative indexes not supported`);
  if (start > end) fail(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
  if (end > BigInt(list.length)) fail(`cannot slice(${start}, ${end}), list is length ${list.length}`);
  return list.slice(Number(start), Number(end));
}

function flatten(list: unknown[], depth: bigint): unknown[] {
  if (depth < 0n) fail('level must be non-negative');
  const out: unknown[] = [];
  for (const item of list) {
    if (Array.isArray(item) && depth > 0n) out.push(...flatten(item, depth - 1n));
    else out.push(item);
  }
  return out;
}

function sorted(list: unknown[]): unknown[] {
  return [...list].sort(compareValues);
}

function sortBy(call: MacroCall) {
  const scope = new Scope([identifier(call.args[0]!, 'sortBy')]);
  const key = call.args[1]!;
  return {
    typeCheck(chk: Checker, _m: unknown, ctx: unknown): CelType {
      const listType = chk.check(call.receiver, ctx);
      if (listType.kind !== 'list' && listType.kind !== 'dyn') throw chk.createError('invalid_receiver', 'sortBy can only be applied to a list', call.receiver);
      chk.check(key, scope.check(ctx as Context, [listType.valueType ?? chk.getType('dyn')]));
      return listType.kind === 'list' ? listType : chk.getType('list');
    },
    evaluate(ev: Evaluator, _m: unknown, ctx: unknown): unknown[] {
      const list = ev.run(call.receiver, ctx);
      if (!Array.isArray(list)) return fail('sortBy can only be applied to a list');
      const keyed = list.map((item) => ({ item, key: scope.run(ev, ctx as Context, key, [item]) }));
      return keyed.sort((a, b) => compareValues(a.key, b.key)).map((k) => k.item);
    },
    async: false,
    chargesSteps: true,
  };
}

export function registerExtendedLists(env: Environment): void {
  const { typeName, value } = namespaceType('lists');
  env.registerType(typeName, value.constructor as new () => object);
  env.registerConstant('lists', typeName, value);
  env.registerFunction(`${typeName}.range(int): list<int>`, (_: unknown, n: bigint) => Array.from({ length: Number(n > 0n ? n : 0n) }, (_v, i) => BigInt(i)));
  env.registerFunction('list.slice(int, int): list', slice);
  env.registerFunction('list.flatten(): list', (list: unknown[]) => flatten(list, 1n));
  env.registerFunction('list.flatten(int): list', flatten);
  env.registerFunction('list.sort(): list', sorted);
  env.registerFunction('list.distinct(): list', (list: unknown[]) => list.filter((item, i) => list.findIndex((other) => celEquals(other, item)) === i));
  env.registerFunction('list.reverse(): list', (list: unknown[]) => [...list].reverse());
  env.registerFunction('list.sortBy(ast, ast): list', sortBy as (...args: unknown[]) => unknown);
}

export type { AstNode };
