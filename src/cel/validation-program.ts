import type { AdmissionRequest, KubeObject } from '../admission/types.js';
import { CelBudgetExceeded, DEFAULT_CEL_LIMITS, EvaluationBudget, type CelLimits } from './budget.js';
import type { CompiledExpression } from './compile.js';
import { lazyVariables, type CelVariable } from './lazy-variables.js';
import type { Authorize } from './library/authorizer.js';
import { requestAuthorizer } from './request-authorizer.js';
import { fallbackMessage, usableMessageExpressionResult } from './validation-message.js';
import { toCel, toCelShared } from './values.js';

export type { CelVariable } from './lazy-variables.js';

/** The reasons a ValidatingAdmissionPolicy validation may give, with the HTTP code the user sees. */
export const VALIDATION_REASONS = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 } as const;
export type ValidationReason = keyof typeof VALIDATION_REASONS;

export interface CelValidation {
  expression: CompiledExpression;
  message?: string;
  messageExpression?: CompiledExpression;
  reason?: ValidationReason;
}

/** ValidatingAdmissionPolicy's auditAnnotations: recorded as `<webhook>/<key>` when the value is a non-empty string. */
export interface CelAuditAnnotation {
  key: string;
  valueExpression: CompiledExpression;
}

export interface CelProgram {
  variables: CelVariable[];
  validations: CelValidation[];
  auditAnnotations: CelAuditAnnotation[];
  /** The entry's params, as JSON. */
  params: unknown;
  limits?: CelLimits;
}

/**
 * What one validation found: `denied` when its expression is false, `error` when it could not
 * be evaluated (the entry's failurePolicy decides what an error does). `index` is the
 * validation's position, as kube-apiserver's audit annotation records it.
 */
export type ValidationFinding = { kind: 'denied'; index: number; message: string; reason: ValidationReason } | { kind: 'error'; index: number; message: string };

/** The `request` variable: the AdmissionRequest without its objects (they are variables of their own). */
function requestVariable(request: AdmissionRequest): Record<string, unknown> {
  const { object: _object, oldObject: _oldObject, ...rest } = request;
  return rest;
}

/** Only what some expression reads is converted: a rule about `object` never pays for `request`. */
export function activationFor(params: unknown, reads: ReadonlySet<string>, request: AdmissionRequest, namespaceObject: KubeObject | null, authorize?: Authorize): Record<string, unknown> {
  const activation: Record<string, unknown> = {};
  if (reads.has('object')) activation.object = toCelShared(request.object);
  if (reads.has('oldObject')) activation.oldObject = toCelShared(request.oldObject);
  if (reads.has('request')) activation.request = toCel(requestVariable(request));
  if (reads.has('params')) activation.params = toCel(params ?? null);
  if (reads.has('namespaceObject')) activation.namespaceObject = toCel(namespaceObject);
  if (reads.has('authorizer')) activation.authorizer = requestAuthorizer(request, authorize);
  return activation;
}

/** kube-apiserver's words for an expression that did not evaluate. */
export function expressionError(source: string, error: unknown): string {
  return `expression '${source}' resulted in error: ${error instanceof Error ? error.message : String(error)}`;
}

function messageOf(validation: CelValidation, activation: Record<string, unknown>, budget: EvaluationBudget): string {
  if (validation.messageExpression) {
    try {
      const text = usableMessageExpressionResult(validation.messageExpression.evaluate(activation, budget));
      if (text !== '') return text;
    } catch (error) {
      // kube-apiserver logs a failing messageExpression and falls back; only the budget is the rule's.
      if (error instanceof CelBudgetExceeded) throw error;
    }
  }
  return fallbackMessage(validation.message, validation.expression.source);
}

/**
 * Evaluates a cel rule on one request as kube-apiserver evaluates a ValidatingAdmissionPolicy:
 * every validation on its own (an error in one leaves the others standing), variables lazily.
 * The budget is the rule's: once it runs out nothing more is evaluated and the rule has one
 * finding, an error, as kube-apiserver's "no further validation rules will be run".
 */
export function runCelProgram(program: CelProgram, reads: ReadonlySet<string>, request: AdmissionRequest, namespaceObject: KubeObject | null, authorize?: Authorize): CelRun {
  const activation = activationFor(program.params, reads, request, namespaceObject, authorize);
  const budget = new EvaluationBudget(program.limits ?? DEFAULT_CEL_LIMITS);
  activation.variables = lazyVariables(program.variables, activation, budget);
  const findings = runValidations(program, activation, budget);
  // Most rules have no audit annotations: no second budget and activation to make for none.
  if (program.auditAnnotations.length === 0) return { findings, auditAnnotations: {}, auditAnnotationErrors: [] };
  // kube-apiserver evaluates audit annotations with a budget of their own.
  const auditBudget = new EvaluationBudget(program.limits ?? DEFAULT_CEL_LIMITS);
  const auditActivation = { ...activation, variables: lazyVariables(program.variables, activation, auditBudget) };
  return { findings, ...runAuditAnnotations(program.auditAnnotations, auditActivation, auditBudget) };
}

/** The CEL name of a value's type, for messages. */
function celTypeName(value: unknown): string {
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'double';
  if (typeof value === 'boolean') return 'bool';
  return Array.isArray(value) ? 'list' : typeof value === 'object' ? 'map' : typeof value;
}

/** kube-apiserver's limit on one audit annotation value (dispatcher.go, maxAuditAnnotationValueLength). */
const MAX_AUDIT_VALUE_BYTES = 10 * 1024;

function cutToBytes(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length <= max ? text : bytes.subarray(0, max).toString('utf8').replace(/\uFFFD$/u, '');
}

export interface CelRun {
  findings: ValidationFinding[];
  /** Audit annotations to record (non-empty strings, trimmed, at most 10 KiB). */
  auditAnnotations: Record<string, string>;
  /** valueExpressions that failed: the failurePolicy decides (Fail denies, Ignore leaves them out). */
  auditAnnotationErrors: string[];
}

/** Each auditAnnotation as kube-apiserver's validator.go: a string is published trimmed, "" and null are left out, anything else is an error. */
function runAuditAnnotations(annotations: readonly CelAuditAnnotation[], activation: Record<string, unknown>, budget: EvaluationBudget): Omit<CelRun, 'findings'> {
  const published: Record<string, string> = {};
  const errors: string[] = [];
  for (const { key, valueExpression } of annotations) {
    let value: unknown;
    try {
      value = valueExpression.evaluate(activation, budget);
    } catch (error) {
      errors.push(error instanceof CelBudgetExceeded ? error.message : expressionError(valueExpression.source, error));
      if (error instanceof CelBudgetExceeded) break;
      continue;
    }
    if (value === null) continue;
    if (typeof value !== 'string') {
      errors.push(`valueExpression '${valueExpression.source}' resulted in unsupported return type: ${celTypeName(value)}. Return type must be either string or null.`);
      continue;
    }
    const trimmed = value.trim();
    if (trimmed !== '') published[key] = cutToBytes(trimmed, MAX_AUDIT_VALUE_BYTES);
  }
  return { auditAnnotations: published, auditAnnotationErrors: errors };
}

function runValidations(program: CelProgram, activation: Record<string, unknown>, budget: EvaluationBudget): ValidationFinding[] {
  const findings: ValidationFinding[] = [];
  for (const [index, validation] of program.validations.entries()) {
    try {
      const result = validation.expression.evaluate(activation, budget);
      if (result === true) continue;
      if (result !== false) throw new Error(`expected a bool, got ${typeof result}`);
      findings.push({ kind: 'denied', index, message: messageOf(validation, activation, budget), reason: validation.reason ?? 'Invalid' });
    } catch (error) {
      if (error instanceof CelBudgetExceeded) return [{ kind: 'error', index, message: error.message }];
      findings.push({ kind: 'error', index, message: expressionError(validation.expression.source, error) });
    }
  }
  return findings;
}
