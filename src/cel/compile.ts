import type { Environment } from '@marcbachmann/cel-js';
import { EvaluationBudget, withBudget } from './budget.js';
import { kubernetesValidationProblem, MAX_EXPRESSION_LENGTH, validatesRegexLiterals } from './environment.js';
import { countMacroCalls, instrumentComprehensions } from './instrument.js';
import { invalidRegexLiteral, routeMatchesToRe2 } from './regex-calls.js';
import { instrumentCallCosts } from './call-costs.js';
import { superLinearCostProblem, type CostContext } from './cost-estimate.js';

export type ExpectedType = 'bool' | 'string' | 'any';

/** Without knowing the variables, every one may be as large as the request. */
const ANY_VARIABLE_FROM_REQUEST: CostContext = { requestVariables: { has: () => true } as unknown as ReadonlySet<string> };

/** A checked, instrumented expression, evaluated against an activation within a budget. */
export interface CompiledExpression {
  readonly source: string;
  /** Top-level variables it reads (object, request, ...): the activation needs only these. */
  readonly reads: ReadonlySet<string>;
  /** `variables.<name>` it reads. */
  readonly readsVariables: ReadonlySet<string>;
  /** The result; throws CelEvaluationError (or the budget's error) when evaluation fails. */
  evaluate(activation: Record<string, unknown>, budget: EvaluationBudget): unknown;
}

export class CelEvaluationError extends Error {
  override readonly name = 'CelEvaluationError';
}

export type CompileResult = { ok: true; expression: CompiledExpression } | { ok: false; problem: string };

interface LibraryError {
  message: string;
  summary?: string;
  range?: { start: number; end: number };
}

/** One line: the library's summary and where in the expression (1-based column). */
function describe(error: unknown, source: string): string {
  const { message, summary, range } = error as LibraryError;
  const text = summary ?? message.split('\n')[0] ?? String(error);
  if (!range) return text;
  const before = source.slice(0, range.start);
  const line = before.split('\n').length;
  const column = range.start - before.lastIndexOf('\n');
  return source.includes('\n') ? `${text} (expression line ${line}, column ${column})` : `${text} (at column ${column})`;
}

interface Node {
  op: string;
  args: unknown;
  meta?: { alternate?: Node };
}

/** Top-level identifiers and `variables.x` fields the expression reads, from its AST. */
function readsOf(root: unknown): { reads: Set<string>; readsVariables: Set<string> } {
  const reads = new Set<string>();
  const readsVariables = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) return value.forEach(visit);
    const node = value as Node;
    if (typeof node.op !== 'string') return Object.values(value).forEach(visit);
    if (node.op === 'id' && typeof node.args === 'string') reads.add(node.args);
    if ((node.op === '.' || node.op === '.?') && Array.isArray(node.args)) {
      const [target, field] = node.args as [Node, unknown];
      if (target?.op === 'id' && target.args === 'variables' && typeof field === 'string') readsVariables.add(field);
    }
    if (node.meta?.alternate) visit(node.meta.alternate);
    visit(node.args);
  };
  visit(root);
  return { reads, readsVariables };
}

function typeProblem(type: string, expected: ExpectedType): string | undefined {
  if (expected === 'any' || type === expected || type === 'dyn') return undefined;
  return `must evaluate to a ${expected}, this one gives ${type}`;
}

/**
 * Parses and type-checks `source` once, against `env`'s variables and functions; an unknown
 * function or variable, a wrong overload or a result of the wrong type is a problem (one line).
 */
export function compileExpression(env: Environment, source: string, expected: ExpectedType, costContext: CostContext = ANY_VARIABLE_FROM_REQUEST): CompileResult {
  if (source.length > MAX_EXPRESSION_LENGTH) return { ok: false, problem: `is ${source.length} characters long; at most ${MAX_EXPRESSION_LENGTH} are allowed` };
  let program: ReturnType<Environment['parse']>;
  try {
    program = env.parse(source);
  } catch (error) {
    return { ok: false, problem: `does not parse: ${describe(error, source)}` };
  }
  const checked = program.check();
  if (!checked.valid) return { ok: false, problem: `does not compile: ${describe(checked.error, source)}` };
  const refused = kubernetesValidationProblem(env, program.ast);
  if (refused) return { ok: false, problem: `does not compile: ${describe({ message: refused.message, range: refused.node }, source)}` };
  const wrongType = typeProblem(checked.type ?? 'dyn', expected);
  if (wrongType) return { ok: false, problem: wrongType };
  // Before 1.29 kube-apiserver stores a bad literal pattern; the expression then errors when it runs.
  const badPattern = validatesRegexLiterals(env) ? invalidRegexLiteral(program.ast, source) : undefined;
  if (badPattern) return { ok: false, problem: badPattern };
  const quadratic = superLinearCostProblem(program.ast, source, costContext);
  if (quadratic) return { ok: false, problem: quadratic };
  routeMatchesToRe2(program.ast);
  instrumentCallCosts(program.ast);
  const loops = instrumentComprehensions(program.ast);
  if (loops === 0 && countMacroCalls(source) > 0) {
    // The library's AST changed shape: refuse rather than run loops nothing bounds.
    return { ok: false, problem: 'cannot be bounded: the CEL library version in use is not the one this server instruments' };
  }
  const { reads, readsVariables } = readsOf(program.ast);
  return {
    ok: true,
    expression: {
      source,
      reads,
      readsVariables,
      evaluate(activation, budget) {
        return withBudget(budget, () => {
          let result: unknown;
          try {
            result = program(activation);
          } catch (error) {
            throw budget.exceeded ?? (error instanceof CelEvaluationError ? error : new CelEvaluationError(describe(error, source)));
          }
          if (budget.exceeded) throw budget.exceeded;
          return result;
        });
      },
    },
  };
}
