/**
 * cel-go's ext.Sets declares `sets.contains`, `sets.equivalent` and `sets.intersects` on
 * `(list(T), list(T))`: its type checker refuses two lists whose element types cannot be the same
 * T (`sets.contains([1], ['a'])`, `[1]` with `[1.0]`), while a dyn element fits any
 * (`sets.contains([1], [dyn(1.0)])` compiles). The library here declares them on plain lists, so
 * that one rule is checked here, after type checking.
 */
import type { AstNode } from './internals.js';
import { assignable } from './type-relations.js';

export interface SetsProblem {
  message: string;
  node: AstNode;
}

const SET_FUNCTIONS = new Set(['contains', 'equivalent', 'intersects']);

/** The problem cel-go's type checker reports for `node`, when it is a sets.* call on lists of different element types. */
export function setsCallProblem(node: AstNode): SetsProblem | undefined {
  if (node.op !== 'rcall') return undefined;
  const [name, target, args] = node.args as [string, AstNode, AstNode[]];
  if (!SET_FUNCTIONS.has(name) || target.op !== 'id' || target.args !== 'sets' || args.length !== 2) return undefined;
  const [left, right] = args.map((arg) => arg.checkedType);
  if (!left?.valueType || !right?.valueType || assignable(left.valueType, right.valueType)) return undefined;
  return { message: `found no matching overload for 'sets.${name}(${left.name}, ${right.name})'`, node };
}
