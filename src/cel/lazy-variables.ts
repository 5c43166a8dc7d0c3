import { CelBudgetExceeded, type EvaluationBudget } from './budget.js';
import { CelEvaluationError, type CompiledExpression } from './compile.js';

export interface CelVariable {
  name: string;
  expression: CompiledExpression;
}

type Settled = { value: unknown } | { error: Error };

/**
 * `variables` as kube-apiserver composes them: each evaluated when an expression first reads it,
 * at most once per request (its cost charged then), and an error only for the expressions that
 * read it: a variable that fails on a branch no validation takes fails nothing. The error reads
 * as kube-apiserver's: `composited variable "x" fails to evaluate: ...`.
 */
export function lazyVariables(variables: readonly CelVariable[], activation: Record<string, unknown>, budget: EvaluationBudget): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const { name, expression } of variables) {
    let settled: Settled | undefined;
    Object.defineProperty(values, name, {
      enumerable: true,
      get() {
        if (!settled) {
          try {
            settled = { value: expression.evaluate(activation, budget) };
          } catch (error) {
            // Running out of budget is the whole rule's, never the variable's.
            if (error instanceof CelBudgetExceeded) throw error;
            settled = { error: new CelEvaluationError(`composited variable "${name}" fails to evaluate: ${(error as Error).message}`) };
          }
        }
        if ('error' in settled) throw settled.error;
        return settled.value;
      },
    });
  }
  return values;
}
