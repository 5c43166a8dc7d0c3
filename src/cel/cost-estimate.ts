/**
 * The load-time half of the cost model: an expression whose worst case grows faster than the
 * object it reads is refused when the policy loads, as kube-apiserver refuses a CRD rule whose
 * estimated cost on a list without maxItems exceeds the limit. The size model is Kubernetes':
 * the largest request kube-apiserver accepts is 3 MiB, so a list read from it holds at most
 * (3 MiB - 2) / 3 = 1,048,575 items (schemas.go, estimateMaxArrayItemsFromMinSize).
 *
 * A loop over a list read from the request multiplies by that bound; a loop over a part of an
 * enclosing loop's element (`containers.all(c, c.ports.all(p, ...))`) does not, since all those
 * parts together fit in the same request; a loop over params or a literal is bounded by the
 * file. One multiplying loop is linear in the object: its worst case is what the runtime
 * budget bounds (an object crafted past it gets the failurePolicy answer, the same every
 * time). Two nested multiplying loops are quadratic: about 10^12 units on a crafted object,
 * beyond any limit, so the expression is refused at load, with where the loops are.
 */
import { DEFAULT_CEL_LIMITS } from './budget.js';
import { isNode, type AstNode } from './instrument.js';

/** Kubernetes' MaxRequestSizeBytes and the list bound it gives (items of at least `{}` plus a comma). */
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;
export const MAX_LIST_ITEMS = Math.floor((MAX_REQUEST_BYTES - 2) / 3);

/** Variables whose values come from the request (they may be as large as it). */
const REQUEST_ROOTS = new Set(['object', 'oldObject', 'request', 'namespaceObject']);

interface Loop {
  variable: string;
  multiplies: boolean;
  /** Where the macro call is in the source. */
  start?: number;
  end?: number;
}

interface PositionedNode extends AstNode {
  start?: number;
  end?: number;
}

interface ComprehensionArgs {
  iterable: unknown;
  iterVarName?: string;
  iterVarName2?: string;
  step: unknown;
  init?: unknown;
}

/** Identifiers an expression reads, with `variables.<name>` as `variables.<name>`. */
function identifiers(root: unknown): Set<string> {
  const names = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) return value.forEach(walk);
    if (!isNode(value)) return Object.values(value).forEach(walk);
    if (value.op === 'id' && typeof value.args === 'string') names.add(value.args);
    if (value.op === '.' || value.op === '.?') {
      const [target, field] = value.args as [AstNode, unknown];
      if (target?.op === 'id' && target.args === 'variables' && typeof field === 'string') names.add(`variables.${field}`);
    }
    if (value.meta.alternate) walk(value.meta.alternate);
    walk(value.args);
  };
  walk(root);
  return names;
}

export interface CostContext {
  /** Variables (by name) whose values come from the request. */
  requestVariables: ReadonlySet<string>;
}

/** Whether a value computed from `names` may be as large as the request. */
function fromRequest(names: ReadonlySet<string>, context: CostContext, loops: readonly Loop[]): boolean {
  for (const name of names) {
    if (REQUEST_ROOTS.has(name)) return true;
    if (name.startsWith('variables.') && context.requestVariables.has(name.slice('variables.'.length))) return true;
    // A name bound inside the expression (cel.bind) may hold anything: counted as the request.
    if (!name.startsWith('variables') && name !== 'params' && !loops.some((l) => l.variable === name) && !name.startsWith('@')) return true;
  }
  return false;
}

/** How a loop over `iterable` grows: with the request, or not (a part of an enclosing element, params, a literal). */
function multiplies(iterable: unknown, context: CostContext, loops: readonly Loop[]): boolean {
  const names = identifiers(iterable);
  if (loops.some((loop) => names.has(loop.variable))) return false;
  return fromRequest(names, context, loops);
}

export interface QuadraticLoops {
  outer: Loop;
  inner: Loop;
}

/** The first pair of nested loops that both multiply by the request's size, if there is one. */
export function findQuadraticLoops(root: unknown, context: CostContext): QuadraticLoops | undefined {
  let found: QuadraticLoops | undefined;
  const seen = new Set<unknown>();
  const walk = (value: unknown, loops: Loop[], caller?: PositionedNode): void => {
    if (found || typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) return value.forEach((v) => walk(v, loops));
    if (!isNode(value)) return Object.values(value).forEach((v) => walk(v, loops));
    if (value.meta.alternate) walk(value.meta.alternate, loops, value as PositionedNode);
    if (value.op === 'in' && loops.some((l) => l.multiplies)) {
      // Membership walks the list: inside a loop over the request, a list from the request is a second loop.
      const [, collection] = value.args as [unknown, unknown];
      if (multiplies(collection, context, loops)) {
        found = { outer: loops.find((l) => l.multiplies)!, inner: { variable: '', multiplies: true, start: (value as PositionedNode).start, end: (value as PositionedNode).end } };
        return;
      }
    }
    if (value.op !== 'comprehension') return walk(value.args, loops);
    const args = value.args as ComprehensionArgs;
    walk(args.iterable, loops);
    walk(args.init, loops);
    const loop: Loop = { variable: args.iterVarName ?? '', multiplies: multiplies(args.iterable, context, loops), start: caller?.start, end: caller?.end };
    const outer = loops.find((l) => l.multiplies);
    if (loop.multiplies && outer) {
      found = { outer, inner: loop };
      return;
    }
    const inside = [...loops, loop];
    if (args.iterVarName2) inside.push({ ...loop, variable: args.iterVarName2 });
    walk(args.step, inside);
  };
  walk(root, []);
  return found;
}

function excerpt(source: string, loop: Loop): string {
  if (loop.start === undefined || loop.end === undefined) return 'a loop';
  const text = source.slice(loop.start, loop.end).replace(/\s+/g, ' ');
  return `"${text.length > 60 ? `${text.slice(0, 57)}...` : text}"`;
}

/** Why the expression is refused at load, or undefined when its worst case grows at most linearly. */
export function superLinearCostProblem(root: unknown, source: string, context: CostContext): string | undefined {
  const loops = findQuadraticLoops(root, context);
  if (!loops) return undefined;
  const worst = MAX_LIST_ITEMS * MAX_LIST_ITEMS;
  return (
    `has a worst-case cost that grows with the square of the object's size: ${excerpt(source, loops.inner)} runs for every item of ${excerpt(source, loops.outer)}, ` +
    `and both lists come from the request (about ${worst.toExponential(1)} cost units on the largest object kube-apiserver accepts, 3 MiB with ${MAX_LIST_ITEMS.toLocaleString('en-US')} items; ` +
    `the limit per expression is ${DEFAULT_CEL_LIMITS.perExpressionCost.toLocaleString('en-US')}). loop over one list only, or take the other from params`
  );
}
