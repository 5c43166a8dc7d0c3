/**
 * The double's CEL for admission policies: @bufbuild/cel, a CEL implementation other than the
 * server's (@marcbachmann/cel-js), so that the double and the server check each other. Parsing
 * stands in for kube-apiserver's compile step at validation; evaluation takes the variables a
 * ValidatingAdmissionPolicy sees (object, oldObject, request, params, namespaceObject,
 * variables, authorizer).
 */
import { celEnv, isCelError, parse, plan, type CelInput, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

/** Kubernetes' CEL sees JSON integers as int: @bufbuild/cel wants bigints for int. */
export function asCelInput(value: unknown): CelInput {
  if (typeof value === 'number') return (Number.isInteger(value) ? BigInt(value) : value) as CelInput;
  if (Array.isArray(value)) return value.map(asCelInput) as CelInput;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asCelInput(v)])) as CelInput;
  }
  return (value ?? null) as CelInput;
}

/** The parse error's text, or undefined when the expression compiles. */
export function compileError(expression: string): string | undefined {
  try {
    parse(expression);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export type CelOutcome = { value: CelValue } | { error: string };

const ENV = celEnv({ funcs: strings });
const planned = new Map<string, ReturnType<typeof plan>>();

function planFor(expression: string): ReturnType<typeof plan> {
  let program = planned.get(expression);
  if (!program) {
    program = plan(ENV, parse(expression));
    planned.set(expression, program);
  }
  return program;
}

/** Evaluates `expression` with `bindings` (already CEL inputs); never throws. */
export function evaluateCel(expression: string, bindings: Record<string, CelInput>): CelOutcome {
  try {
    const result = planFor(expression)(bindings);
    if (isCelError(result)) return { error: result.message };
    return { value: result };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
