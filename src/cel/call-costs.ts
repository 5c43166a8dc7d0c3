/**
 * The cost of calls whose work grows with their arguments, charged as cel-go's cost tracker and
 * Kubernetes' library (k8s.io/apiserver/pkg/cel/library/cost.go) charge them: a string
 * traversal costs 0.1 per character, a list traversal 1 per element. Charged before the call
 * from the arguments' sizes (so `a.contains(b)` on two 3 MiB strings is refused before it
 * runs), or after it from the result's size where only the result tells (`join`, `+`).
 * Regular expressions charge in regex-calls.ts and the library.
 */
import { chargeCost } from './budget.js';
import { forEachNode, type AstNode } from './instrument.js';

const STRING_TRAVERSAL = 0.1;

function sizeOf(value: unknown): number {
  if (typeof value === 'string' || Array.isArray(value)) return value.length;
  return 0;
}

const traversal = (value: unknown): number => (typeof value === 'string' ? Math.ceil(sizeOf(value) * STRING_TRAVERSAL) : sizeOf(value));

/** Receiver and arguments -> units, charged before the call. */
type Before = (values: readonly unknown[]) => number;
/** The result -> units, charged after the call. */
type After = (result: unknown) => number;

const BEFORE_CALL: Record<string, Before> = {
  // O(n x m) searches: the product of both traversals, as cel-go's contains.
  contains: ([text, part]) => Math.max(1, traversal(text) * traversal(part)),
  indexOf: ([text, part]) => Math.max(1, traversal(text) * (typeof text === 'string' ? traversal(part) : 1)),
  lastIndexOf: ([text, part]) => Math.max(1, traversal(text) * (typeof text === 'string' ? traversal(part) : 1)),
  // O(n) in the argument, as cel-go's startsWith/endsWith.
  startsWith: ([, prefix]) => Math.max(1, traversal(prefix)),
  endsWith: ([, suffix]) => Math.max(1, traversal(suffix)),
  // O(n) in the receiver (Kubernetes' cost.go).
  lowerAscii: ([text]) => Math.max(1, traversal(text)),
  upperAscii: ([text]) => Math.max(1, traversal(text)),
  substring: ([text]) => Math.max(1, traversal(text)),
  trim: ([text]) => Math.max(1, traversal(text)),
  charAt: ([text]) => Math.max(1, traversal(text)),
  // Traversal plus building the result (Kubernetes' cost.go: 2 x 0.1 per character).
  replace: ([text]) => Math.max(1, 2 * traversal(text)),
  split: ([text]) => Math.max(1, 2 * traversal(text)),
  // List traversals (Kubernetes' cost.go: isSorted, sum, min, max).
  isSorted: ([list]) => Math.max(1, traversal(list)),
  sum: ([list]) => Math.max(1, traversal(list)),
  min: ([list]) => Math.max(1, traversal(list)),
  max: ([list]) => Math.max(1, traversal(list)),
};

const AFTER_CALL: Record<string, After> = {
  join: (result) => Math.max(1, 2 * traversal(result)),
};

const OPERATORS: Record<string, { before?: Before; after?: After }> = {
  // Concatenation builds its result: a chain of doublings is stopped by the cost, not by memory.
  '+': { after: (result) => (typeof result === 'string' || Array.isArray(result) ? Math.max(1, traversal(result)) : 0) },
  // Membership in a list walks it.
  in: { before: ([, collection]) => (Array.isArray(collection) ? Math.max(1, collection.length) : 0) },
};

interface HandledNode extends AstNode {
  handle?: (...args: unknown[]) => unknown;
}

function wrapCall(node: HandledNode, before: Before | undefined, after: After | undefined, valuesAt: (args: unknown[]) => readonly unknown[]): void {
  const original = node.handle;
  if (typeof original !== 'function') return;
  node.handle = (...args: unknown[]) => {
    if (before) chargeCost(before(valuesAt(args)));
    const result = original(...args);
    if (after) chargeCost(after(result));
    return result;
  };
}

/** Makes the size-dependent calls and operators of a checked expression charge the running budget. */
export function instrumentCallCosts(root: unknown): void {
  forEachNode(root, (node) => {
    const args = node.args as unknown[];
    if (node.op === 'rcall' || node.op === 'call') {
      const name = args[0] as string;
      const before = BEFORE_CALL[name];
      const after = AFTER_CALL[name];
      if (!before && !after) return;
      // rcall handles get (receiver and arguments, ev, ast); call handles get (arguments, ast, ev).
      wrapCall(node as HandledNode, before, after, (handleArgs) => handleArgs[0] as unknown[]);
      return;
    }
    const operator = OPERATORS[node.op];
    // Binary operator handles get (left, right, ast, ev).
    if (operator) wrapCall(node as HandledNode, operator.before, operator.after, (handleArgs) => handleArgs.slice(0, 2));
  });
}
