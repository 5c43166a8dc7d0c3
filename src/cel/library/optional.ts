/**
 * The optional library functions cel-js lacks, by the cel-go version Kubernetes took them with:
 * equality, optional.ofNonZeroValue and optMap (1.28, cel-go 0.16), optFlatMap (1.29, cel-go 0.17),
 * list.first(), list.last(), optional.unwrap() and unwrapOpt() (1.33, cel-go 0.23).
 */
import { Optional, type Environment } from '@marcbachmann/cel-js';
import type { CelType, Checker, Evaluator } from '../engine/internals.js';
import { identifier, Scope, type Context, type MacroCall } from './bound-evaluation.js';
import { optionalEquals } from './equality.js';

/** cel-go's zero values: 0, 0u, 0.0, '', b'', false, null, empty list or map. */
function isZero(value: unknown): boolean {
  if (value === null || value === false || value === '' || value === 0 || value === 0n) return true;
  if (Array.isArray(value) || value instanceof Uint8Array) return value.length === 0;
  if (value instanceof Map) return value.size === 0;
  if (typeof value === 'object' && value !== null) {
    if (value.constructor?.name === 'UnsignedInt') return (value as { valueOf(): bigint }).valueOf() === 0n;
    if (Object.getPrototypeOf(value) === Object.prototype) return Object.keys(value).length === 0;
  }
  return false;
}

/** `opt.optMap(x, expr)` / `opt.optFlatMap(x, expr)`: expr on the value when there is one. */
function optionalMap(flat: boolean) {
  return (call: MacroCall) => {
    const scope = new Scope([identifier(call.args[0]!, flat ? 'optFlatMap' : 'optMap')]);
    const body = call.args[1]!;
    return {
      typeCheck(chk: Checker, _m: unknown, ctx: unknown): CelType {
        const receiver = chk.check(call.receiver, ctx);
        const inner = receiver.kind === 'optional' ? (receiver.valueType ?? chk.getType('dyn')) : chk.getType('dyn');
        const result = chk.check(body, scope.check(ctx as Context, [inner]));
        if (flat) return result.kind === 'optional' || result.kind === 'dyn' ? result : chk.getType('optional<dyn>');
        return chk.getType(`optional<${result.name}>`);
      },
      evaluate(ev: Evaluator, _m: unknown, ctx: unknown): unknown {
        const optional = ev.run(call.receiver, ctx);
        if (!(optional instanceof Optional)) throw ev.createError('optional_expected', 'optMap receiver must be optional', call.receiver);
        if (!optional.hasValue()) return Optional.none();
        const result = scope.run(ev, ctx as Context, body, [optional.value()]);
        return flat ? result : Optional.of(result);
      },
      async: false,
      chargesSteps: true,
    };
  };
}

export function registerOptionalValues(env: Environment): void {
  // cel-go's Optional.Equal: cel-js has no == for optionals, and compares list and map elements through the registered ones.
  env.registerOperator('optional<A> == optional<A>', optionalEquals);
  env.registerFunction('OptionalNamespace.ofNonZeroValue(A): optional<A>', (_: unknown, value: unknown) => (isZero(value) ? Optional.none() : Optional.of(value)));
  env.registerFunction('optional.optMap(ast, ast): optional<dyn>', optionalMap(false) as (...args: unknown[]) => unknown);
}

export function registerOptionalFlatMap(env: Environment): void {
  env.registerFunction('optional.optFlatMap(ast, ast): optional<dyn>', optionalMap(true) as (...args: unknown[]) => unknown);
}

const unwrap = (list: unknown[]) => list.flatMap((item) => (item instanceof Optional && item.hasValue() ? [item.value()] : []));

export function registerOptionalFirstLast(env: Environment): void {
  env.registerFunction('list<A>.first(): optional<A>', (list: unknown[]) => (list.length ? Optional.of(list[0]) : Optional.none()));
  env.registerFunction('list<A>.last(): optional<A>', (list: unknown[]) => (list.length ? Optional.of(list.at(-1)) : Optional.none()));
  env.registerFunction('OptionalNamespace.unwrap(list): list', (_: unknown, list: unknown[]) => unwrap(list));
  env.registerFunction('list.unwrapOpt(): list', unwrap);
}
