/**
 * One ValidatingAdmissionPolicy evaluated for one binding and one params object, as
 * k8s.io/apiserver's policy/validating validator does: matchConditions (a false skips the
 * policy; an error counts under failurePolicy), variables, each validation (false denies with
 * messageExpression, message or `failed expression: ...`; an error is a denial under Fail and
 * nothing under Ignore), then auditAnnotations. CEL through the double's own library.
 * Variables are evaluated in order up front (kube-apiserver evaluates them lazily): a failed
 * variable fails only the expressions that name it. `authorizer` is null here.
 */
import type { CelInput, CelValue } from '@bufbuild/cel';
import type { KubeObject } from '../fake-apiserver/index.js';
import { isRecord } from '../fake-apiserver/objects.js';
import { asCelInput, evaluateCel } from '../fake-apiserver/policy-cel.js';

type Json = Record<string, unknown>;

export interface PolicyDecision {
  /** Index of the validation (for the audit annotation's expressionIndex). */
  index: number;
  message: string;
  /** A StatusReason; empty for an evaluation error. */
  reason: string;
}

export interface PolicyResult {
  decisions: PolicyDecision[];
  /** Published audit annotations: key (without the policy prefix) and value. */
  annotations: Array<{ key: string; value: string }>;
}

export interface PolicyInput {
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
  request: Json;
  params: KubeObject | undefined;
  namespaceObject: KubeObject | undefined;
}

const MAX_MESSAGE_BYTES = 5 * 1024;
const records = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const resultError = (expression: string, error: string): string => `expression '${expression}' resulted in error: ${error}`;

function namespaceObject(namespace: KubeObject | undefined): Json | null {
  if (!namespace) return null;
  const { managedFields: _managed, ...metadata } = namespace.metadata ?? {};
  return { metadata, spec: namespace.spec ?? {}, status: namespace.status ?? {} };
}

/** The variables a policy's expressions see; shared by the validating and mutating policy plugins. */
export class Activation {
  readonly bindings: Record<string, CelInput>;
  readonly #failedVariables = new Map<string, string>();

  constructor(input: PolicyInput, variables: Json[]) {
    const values: Record<string, CelValue> = {};
    this.bindings = {
      object: asCelInput(input.object ?? null),
      oldObject: asCelInput(input.oldObject ?? null),
      request: asCelInput(input.request),
      params: asCelInput(input.params ?? null),
      namespaceObject: asCelInput(namespaceObject(input.namespaceObject)),
      authorizer: null,
      variables: values as CelInput,
    };
    for (const variable of variables) {
      const name = text(variable.name);
      const outcome = this.evaluate(text(variable.expression));
      if ('error' in outcome) this.#failedVariables.set(name, outcome.error);
      else values[name] = outcome.value;
    }
  }

  evaluate(expression: string): { value: CelValue } | { error: string } {
    return this.evaluateWith(expression, evaluateCel);
  }

  /** `expression` by `run` (plain CEL, or a mutation's); an expression naming a failed variable fails with it. */
  evaluateWith<T>(expression: string, run: (expression: string, bindings: Record<string, CelInput>) => { value: T } | { error: string }): { value: T } | { error: string } {
    for (const [name, error] of this.#failedVariables) {
      if (new RegExp(`\\bvariables\\.${name}\\b`).test(expression)) return { error: resultError(expression, error) };
    }
    const outcome = run(expression, this.bindings);
    return 'error' in outcome ? { error: resultError(expression, outcome.error) } : outcome;
  }
}

/** false: skip; true: go on; a string: the error (already decided by failurePolicy to count). */
export function matchConditions(activation: Activation, conditions: Json[]): boolean | string[] {
  const errors: string[] = [];
  for (const condition of conditions) {
    const outcome = activation.evaluate(text(condition.expression));
    if ('error' in outcome) errors.push(outcome.error);
    else if (outcome.value === false) return false;
  }
  return errors.length > 0 ? errors : true;
}

function failureMessage(activation: Activation, validation: Json): string {
  const messageExpression = text(validation.messageExpression);
  if (messageExpression.trim() !== '') {
    const outcome = activation.evaluate(messageExpression);
    if ('value' in outcome && typeof outcome.value === 'string') {
      const message = outcome.value.trim();
      if (message !== '' && Buffer.byteLength(message) <= MAX_MESSAGE_BYTES && !message.includes('\n')) return message;
    }
  }
  if (text(validation.message).trim() !== '') return text(validation.message).trim();
  return `failed expression: ${text(validation.expression).trim()}`;
}

function auditAnnotations(activation: Activation, spec: Json, fail: boolean, result: PolicyResult): void {
  for (const annotation of records(spec.auditAnnotations)) {
    const expression = text(annotation.valueExpression);
    const outcome = activation.evaluate(expression.trim());
    if ('error' in outcome) {
      if (fail) result.decisions.push({ index: -1, message: outcome.error, reason: '' });
    } else if (typeof outcome.value === 'string') {
      if (outcome.value.trim() !== '') result.annotations.push({ key: text(annotation.key), value: outcome.value.trim() });
    } else if (outcome.value !== null) {
      const message = `valueExpression '${expression}' resulted in unsupported return type: ${typeof outcome.value}. Return type must be either string or null.`;
      result.decisions.push({ index: -1, message, reason: '' });
    }
  }
}

export function evaluatePolicy(policy: KubeObject, input: PolicyInput): PolicyResult {
  const spec = isRecord(policy.spec) ? policy.spec : {};
  const fail = spec.failurePolicy !== 'Ignore';
  const result: PolicyResult = { decisions: [], annotations: [] };
  const activation = new Activation(input, records(spec.variables));
  const matched = matchConditions(activation, records(spec.matchConditions));
  if (matched === false) return result;
  if (Array.isArray(matched)) {
    if (fail) result.decisions.push({ index: -1, message: matched.length === 1 ? matched[0]! : `[${matched.join(', ')}]`, reason: '' });
    return result;
  }
  records(spec.validations).forEach((validation, index) => {
    const outcome = activation.evaluate(text(validation.expression));
    if ('error' in outcome) {
      if (fail) result.decisions.push({ index, message: outcome.error, reason: '' });
    } else if (outcome.value !== true) {
      result.decisions.push({ index, message: failureMessage(activation, validation), reason: text(validation.reason) || 'Invalid' });
    }
  });
  auditAnnotations(activation, spec, fail, result);
  return result;
}
