import { chargeStep } from './budget.js';

/**
 * The library's checked AST, as far as this module relies on it (pinned version): nodes with an
 * `op`, `args`, `meta.alternate` (a macro's expansion) and `evaluate(ev, node, ctx)`;
 * comprehension nodes (what all/exists/exists_one/map/filter expand to) keep their loop body
 * in `args.step`. test/policy-cel-budget.test.ts fails when an upgrade changes this.
 */
interface AstNode {
  op: string;
  args: unknown;
  meta: { alternate?: AstNode; macro?: { evaluate: Evaluate }; evaluate: Evaluate };
  evaluate: Evaluate;
}
type Evaluate = (ev: unknown, node: unknown, ctx: unknown) => unknown;

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as { op?: unknown }).op === 'string' && 'meta' in value;
}

/** The function the node's own evaluate would settle on (it replaces itself on first call). */
function resolvedEvaluate(node: AstNode): Evaluate {
  const { alternate, macro } = node.meta;
  if (alternate) return (ev, _node, ctx) => alternate.evaluate(ev, alternate, ctx);
  if (macro) return (ev, _node, ctx) => macro.evaluate(ev, macro, ctx);
  return node.meta.evaluate;
}

function chargeEachStep(step: AstNode): void {
  const inner = resolvedEvaluate(step);
  Object.defineProperty(step, 'evaluate', {
    configurable: true,
    writable: true,
    value: (ev: unknown, node: unknown, ctx: unknown) => {
      chargeStep();
      return inner(ev, node, ctx);
    },
  });
}

function children(node: AstNode): unknown[] {
  const { args } = node;
  if (Array.isArray(args)) return args.flatMap((arg: unknown) => (Array.isArray(arg) ? arg : [arg]));
  if (typeof args === 'object' && args !== null && !isNode(args)) return Object.values(args);
  return [args];
}

/**
 * Makes every comprehension step of a checked expression charge the running budget. Returns
 * how many loops it instrumented.
 */
export function instrumentComprehensions(root: unknown): number {
  let loops = 0;
  const seen = new Set<AstNode>();
  const visit = (value: unknown): void => {
    if (!isNode(value) || seen.has(value)) return;
    seen.add(value);
    if (value.meta.alternate) visit(value.meta.alternate);
    // Macros of library/ that loop charge each step themselves (bound-evaluation.ts).
    if ((value.meta.macro as { chargesSteps?: boolean } | undefined)?.chargesSteps) loops++;
    if (value.op === 'comprehension') {
      const step = (value.args as { step?: unknown }).step;
      if (isNode(step)) {
        chargeEachStep(step);
        loops++;
      }
    }
    for (const child of children(value)) visit(child);
  };
  visit(root);
  return loops;
}

/** How many macros (comprehensions) an expression's source text names, to cross-check the instrumentation. */
export function countMacroCalls(source: string): number {
  return source.match(/\.\s*(all|exists_one|exists|map|filter)\s*\(/g)?.length ?? 0;
}
