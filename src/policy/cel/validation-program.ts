import { applyMode } from '../mode.js';
import type { AdmissionRequest, KubeObject, RuleMode, ValidationDecision } from '../types.js';
import { DEFAULT_CEL_LIMITS, EvaluationBudget, type CelLimits } from './budget.js';
import { CelEvaluationError, type CompiledExpression } from './compile.js';
import { toCel, toCelShared } from './values.js';

/** The reasons a ValidatingAdmissionPolicy validation may give, with the HTTP code the user sees. */
export const VALIDATION_REASONS = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 } as const;
export type ValidationReason = keyof typeof VALIDATION_REASONS;

export interface CelVariable {
  name: string;
  expression: CompiledExpression;
}

export interface CelValidation {
  expression: CompiledExpression;
  message?: string;
  messageExpression?: CompiledExpression;
  reason?: ValidationReason;
}

export interface CelProgram {
  variables: CelVariable[];
  validations: CelValidation[];
  /** The entry's params, as JSON. */
  params: unknown;
  limits?: CelLimits;
}

/** The `request` variable: the AdmissionRequest without its objects (they are variables of their own). */
function requestVariable(request: AdmissionRequest): Record<string, unknown> {
  const { object: _object, oldObject: _oldObject, ...rest } = request;
  return rest;
}

/** Only what some expression reads is converted: a rule about `object` never pays for `request`. */
function activationFor(program: CelProgram, reads: ReadonlySet<string>, request: AdmissionRequest, namespaceObject: KubeObject | null) {
  const activation: Record<string, unknown> = { variables: {} };
  if (reads.has('object')) activation.object = toCelShared(request.object);
  if (reads.has('oldObject')) activation.oldObject = toCelShared(request.oldObject);
  if (reads.has('request')) activation.request = toCel(requestVariable(request));
  if (reads.has('params')) activation.params = toCel(program.params ?? null);
  if (reads.has('namespaceObject')) activation.namespaceObject = toCel(namespaceObject);
  return activation;
}

function messageOf(validation: CelValidation, activation: Record<string, unknown>, budget: EvaluationBudget): string {
  if (validation.messageExpression) {
    // As kube-apiserver: a messageExpression that fails or gives "" falls back to message.
    try {
      const text = validation.messageExpression.evaluate(activation, budget);
      if (typeof text === 'string' && text.trim() !== '') return text.replace(/\s*\n\s*/g, ' ');
    } catch (error) {
      if (budget.exceeded) throw error;
    }
  }
  return validation.message ?? `failed expression: ${validation.expression.source.trim()}`;
}

interface Failure {
  message: string;
  reason: ValidationReason;
}

/**
 * Evaluates a cel rule on one request: variables in order, then every validation (all of them,
 * so the user sees every failure at once). Throws when an expression errors or the budget runs
 * out: the server then answers by the webhook's failurePolicy.
 */
export function runCelProgram(
  program: CelProgram,
  reads: ReadonlySet<string>,
  request: AdmissionRequest,
  namespaceObject: KubeObject | null,
): Failure[] {
  const budget = new EvaluationBudget(program.limits ?? DEFAULT_CEL_LIMITS);
  const activation = activationFor(program, reads, request, namespaceObject);
  const variables = activation.variables as Record<string, unknown>;
  for (const variable of program.variables) {
    variables[variable.name] = evaluateNamed(variable.expression, activation, budget, `variable "${variable.name}"`);
  }
  const failures: Failure[] = [];
  program.validations.forEach((validation, index) => {
    const result = evaluateNamed(validation.expression, activation, budget, `validation ${index}`);
    if (result === true) return;
    if (result !== false) throw new CelEvaluationError(`validation ${index} gave ${typeof result}, not a bool`);
    failures.push({ message: messageOf(validation, activation, budget), reason: validation.reason ?? 'Invalid' });
  });
  return failures;
}

function evaluateNamed(expression: CompiledExpression, activation: Record<string, unknown>, budget: EvaluationBudget, what: string): unknown {
  try {
    return expression.evaluate(activation, budget);
  } catch (error) {
    throw new CelEvaluationError(`${what}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The decision for the failures under the entry's mode; enforce uses the first failure's reason. */
export function celDecision(failures: readonly Failure[], mode: RuleMode, source: string): ValidationDecision {
  const decision = applyMode(
    failures.map((f) => f.message),
    mode,
    { source },
  );
  const first = failures[0];
  if (decision.allowed || !first) return decision;
  return { ...decision, code: VALIDATION_REASONS[first.reason], reason: first.reason };
}

