import { compileExpression } from '../../cel/compile.js';
import { environmentWith, VALIDATION_VARIABLES } from '../../cel/environment.js';
import { hasControlCharacter } from '../../admission/warning-text.js';
import type { PolicySpec, ValidationSpec } from './objects.js';

type Condition = { name: string; expression: string };
type Variable = { name: string; expression: string };
type AuditAnnotation = { key: string; valueExpression: string };

/** A policy's matchConditions as an entry holds them. */
export interface GuardedConditions {
  /** The conditions a webhook's matchConditions can evaluate (object, oldObject, request, authorizer), with their index in the policy. */
  kept: Array<{ index: number; condition: Condition }>;
  /** The conditions that read params or variables, which only the validations see. */
  moved: Array<{ index: number; condition: Condition }>;
  /** Those that read namespaceObject, which this import does not carry over. */
  refused: Array<{ index: number; condition: Condition }>;
}

const env = environmentWith(VALIDATION_VARIABLES);

/** The top-level variables `expression` reads; undefined when it does not compile (the entry's load reports it). */
function readsOf(expression: string): ReadonlySet<string> | undefined {
  const compiled = compileExpression(env, expression, 'any');
  return compiled.ok ? compiled.expression.reads : undefined;
}

/** Sorts the policy's matchConditions by what they read. */
export function sortConditions(spec: PolicySpec): GuardedConditions {
  const sorted: GuardedConditions = { kept: [], moved: [], refused: [] };
  for (const [index, condition] of (spec.matchConditions ?? []).entries()) {
    const reads = readsOf(condition.expression);
    const place = reads?.has('namespaceObject') ? sorted.refused : reads?.has('params') || reads?.has('variables') ? sorted.moved : sorted.kept;
    place.push({ index, condition });
  }
  return sorted;
}

/** In parentheses; a closing parenthesis on a line of its own after a `//` comment, which would hide it. */
const wrapped = (expression: string): string => (expression.includes('//') ? `(${expression.trim()}\n)` : `(${expression.trim()})`);

/** A variable name the policy does not use. */
function freshName(variables: readonly Variable[]): string {
  const taken = new Set(variables.map((v) => v.name));
  let name = 'matchConditions';
  for (let n = 2; taken.has(name); n++) name = `matchConditions${n}`;
  return name;
}

/** The policy's variables, validations and auditAnnotations with the moved conditions as a guard of each. */
export interface GuardedProgram {
  variables: Variable[];
  validations: ValidationSpec[];
  auditAnnotations: AuditAnnotation[];
}

/**
 * The moved conditions as kube-apiserver applies matchConditions, inside the expressions: one
 * variable holds all of them joined by `&&` (CEL's `&&` is false when any side is false, even if
 * another fails to evaluate, and fails when none is false and one fails: exactly how a policy's
 * matchConditions are decided), defined last so it may read every variable. Each validation runs
 * only when it is true (`guard ? validation : true`: a false guard passes, as a skipped policy; a
 * failing guard fails the validation, which the failurePolicy and validationActions then handle as
 * kube-apiserver handles a failing matchCondition), and each audit annotation is null (not
 * written) when it is false. A validation without message keeps kube-apiserver's text for it.
 */
export function guardedProgram(spec: PolicySpec, moved: GuardedConditions['moved']): GuardedProgram {
  const variables = spec.variables ?? [];
  const validations = (spec.validations ?? []).map(({ fieldPath: _fieldPath, ...validation }) => validation);
  const auditAnnotations = spec.auditAnnotations ?? [];
  if (moved.length === 0) return { variables, validations, auditAnnotations };
  const guard = freshName(variables);
  const defaultMessage = (expression: string): string | undefined => {
    const text = `failed expression: ${expression.trim()}`;
    return hasControlCharacter(text) ? undefined : text;
  };
  return {
    variables: [...variables, { name: guard, expression: moved.map(({ condition }) => wrapped(condition.expression)).join(' && ') }],
    validations: validations.map((validation) => {
      const message = validation.message?.trim() ? validation.message : defaultMessage(validation.expression);
      return { ...validation, expression: `variables.${guard} ? ${wrapped(validation.expression)} : true`, ...(message ? { message } : {}) };
    }),
    auditAnnotations: auditAnnotations.map((a) => ({ ...a, valueExpression: `variables.${guard} ? dyn${wrapped(a.valueExpression)} : null` })),
  };
}
