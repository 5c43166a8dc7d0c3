/**
 * Macros that evaluate an expression with one or two loop variables bound (two-variable
 * comprehensions, sortBy), on the library's own checker and evaluator contexts. Each bound
 * evaluation is a comprehension step: it is charged to the running budget like the library's
 * own macros' steps.
 */
import { chargeStep } from '../budget.js';
import type { AstNode, CelType, Checker, Evaluator } from '../engine/internals.js';

export interface Context {
  forkWithVariable(name: string, type: CelType): Context;
  setIterValue(value: unknown, ev: Evaluator): Context;
  reuse(parent: Context): Context;
}

export interface MacroCall {
  ast: AstNode;
  args: AstNode[];
  receiver: AstNode;
}

export function identifier(node: AstNode, what: string): string {
  if (node.op === 'id' && typeof node.args === 'string') return node.args;
  throw Object.assign(new SyntaxError(`${what}: the variable must be a simple identifier`), { range: { start: node.start, end: node.end } });
}

/** Loop variables: checked once with their types, bound to values at each step. */
export class Scope {
  #types: CelType[] = [];
  constructor(readonly names: readonly string[]) {}

  check(ctx: Context, types: CelType[]): Context {
    this.#types = types;
    return this.names.reduce((scope, name, i) => scope.forkWithVariable(name, types[i]!), ctx);
  }

  /** Runs `body` with the names bound to `values`: one comprehension step. */
  run(ev: Evaluator, ctx: Context, body: AstNode, values: unknown[]): unknown {
    chargeStep();
    const scope = this.names.reduce((outer, name, i) => outer.forkWithVariable(name, this.#types[i]!).setIterValue(values[i], ev), ctx);
    return ev.run(body, scope);
  }
}

export function dynType(chk: Checker): CelType {
  return chk.getType('dyn');
}
