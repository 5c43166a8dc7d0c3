import { chargeCost } from './budget.js';

/**
 * The library's checked AST, as far as this module relies on it (pinned version): nodes with an
 * `op`, `args`, `meta.alternate` (a macro's expansion) and `evaluate(ev, node, ctx)`;
 * comprehension nodes (what all/exists/exists_one/map/filter expand to) keep their loop body
 * in `args.step`. test/policy-cel-budget.test.ts fails when an upgrade changes this.
 */
export interface AstNode {
  op: string;
  args: unknown;
  meta: { alternate?: AstNode; macro?: { evaluate: Evaluate }; evaluate: Evaluate };
  evaluate: Evaluate;
}
type Evaluate = (ev: unknown, node: unknown, ctx: unknown) => unknown;

export function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as { op?: unknown }).op === 'string' && 'meta' in value;
}

/** The function the node's own evaluate would settle on (it replaces itself on first call). */
function resolvedEvaluate(node: AstNode): Evaluate {
  const { alternate, macro } = node.meta;
  if (alternate) return (ev, _node, ctx) => alternate.evaluate(ev, alternate, ctx);
  if (macro) return (ev, _node, ctx) => macro.evaluate(ev, macro, ctx);
  return node.meta.evaluate;
}

/** Makes each run of a comprehension's step charge its node count: a loop's body costs what it contains. */
function chargeEachStep(step: AstNode): void {
  const inner = resolvedEvaluate(step);
  const units = nodeCount(step);
  Object.defineProperty(step, 'evaluate', {
    configurable: true,
    writable: true,
    value: (ev: unknown, node: unknown, ctx: unknown) => {
      chargeCost(units);
      return inner(ev, node, ctx);
    },
  });
}

/** Nodes of a checked expression, macro expansions included. */
export function nodeCount(root: unknown): number {
  let count = 0;
  forEachNode(root, () => count++);
  return count;
}

function children(node: AstNode): unknown[] {
  const { args } = node;
  if (Array.isArray(args)) return args.flatMap((arg: unknown) => (Array.isArray(arg) ? arg : [arg]));
  if (typeof args === 'object' && args !== null && !isNode(args)) return Object.values(args);
  return [args];
}

/** Calls `visit` once for every node of a checked expression, macro expansions included. */
export function forEachNode(root: unknown, visit: (node: AstNode) => void): void {
  const seen = new Set<AstNode>();
  const walk = (value: unknown): void => {
    if (!isNode(value) || seen.has(value)) return;
    seen.add(value);
    visit(value);
    if (value.meta.alternate) walk(value.meta.alternate);
    for (const child of children(value)) walk(child);
  };
  walk(root);
}

/**
 * Makes every comprehension step of a checked expression charge the running budget (its node
 * count per run). Returns how many loops it instrumented.
 */
export function instrumentComprehensions(root: unknown): number {
  let loops = 0;
  forEachNode(root, (node) => {
    // Macros of library/ that loop charge each step themselves (bound-evaluation.ts).
    if ((node.meta.macro as { chargesSteps?: boolean } | undefined)?.chargesSteps) loops++;
    if (node.op !== 'comprehension') return;
    const step = (node.args as { step?: unknown }).step;
    if (isNode(step)) {
      chargeEachStep(step);
      loops++;
    }
  });
  return loops;
}

/** How many macros (comprehensions) an expression's source text names, to cross-check the instrumentation. */
export function countMacroCalls(source: string): number {
  return source.match(/\.\s*(all|exists_one|exists|map|filter)\s*\(/g)?.length ?? 0;
}
