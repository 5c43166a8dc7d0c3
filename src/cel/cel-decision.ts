import { DEFAULT_AUDIT_KEY, isValidAuditAnnotationKey } from '../admission/mode.js';
import type { FailurePolicy, RuleMode, ValidationDecision } from '../admission/types.js';
import { VALIDATION_REASONS, type CelRun, type ValidationFinding } from './validation-program.js';

/** The audit annotation that records validation errors a failurePolicy of Ignore let through. */
export const IGNORED_ERRORS_KEY = 'failed-open';
/** kube-apiserver's key for failed validations under the Audit action (recorded as `<webhook>/validation_failure`). */
export const VALIDATION_FAILURE_KEY = 'validation_failure';

/** A ValidatingAdmissionPolicyBinding's validationActions. */
export type ValidationAction = 'Deny' | 'Warn' | 'Audit';
export const VALIDATION_ACTIONS: readonly ValidationAction[] = ['Deny', 'Warn', 'Audit'];

/** What a `mode` means as validationActions. */
export function actionsOfMode(mode: RuleMode): ValidationAction[] {
  return mode === 'enforce' ? ['Deny'] : mode === 'warn' ? ['Warn'] : ['Audit'];
}

/**
 * The first failure only: kube-apiserver's dispatcher.go publishes each failure as a one-entry
 * list under the same key, and admission attributes keep a key's first value (AddAnnotation
 * refuses to overwrite it), so its audit event holds the first failed validation.
 */
function auditValue(failures: readonly ValidationFinding[], name: string, actions: readonly ValidationAction[]): string {
  const entries = failures.slice(0, 1).map((f) => ({ message: f.message, policy: name, binding: name, expressionIndex: f.index, validationActions: actions }));
  return JSON.stringify(entries);
}

function nothingFound(run: CelRun): boolean {
  if (run.findings.length > 0 || run.auditAnnotationErrors.length > 0) return false;
  for (const _ in run.auditAnnotations) return false;
  return true;
}

/**
 * The decision for a rule's run, as kube-apiserver's dispatcher makes it: an error counts as a
 * failed validation under failurePolicy Fail (with reason Invalid, 422) and is let through under
 * Ignore (recorded in an audit annotation); then each action acts on what failed: Deny denies
 * (the code of the first), Warn warns, Audit records `validation_failure` as kube-apiserver
 * does (and `policy-violation`, as every rule here). An audit annotation that failed to
 * evaluate under Fail denies, as there.
 */
export function celDecision(run: CelRun, actions: readonly ValidationAction[], failurePolicy: FailurePolicy, source: string): ValidationDecision {
  // What the rest comes to for a run that found nothing, the usual case, without its arrays.
  if (nothingFound(run)) return { allowed: true };
  const failed = run.findings.filter((f) => f.kind === 'denied' || failurePolicy === 'Fail');
  const ignored = [...run.findings.filter((f) => f.kind === 'error' && failurePolicy === 'Ignore').map((f) => f.message), ...(failurePolicy === 'Ignore' ? run.auditAnnotationErrors : [])];
  const denials = [...(actions.includes('Deny') ? failed.map((f) => f.message) : []), ...(failurePolicy === 'Fail' ? run.auditAnnotationErrors : [])];
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(run.auditAnnotations)) if (isValidAuditAnnotationKey(key)) annotations[key] = value;
  if (actions.includes('Audit') && failed.length > 0) {
    annotations[DEFAULT_AUDIT_KEY] = failed.map((f) => f.message).join('; ');
    annotations[VALIDATION_FAILURE_KEY] = auditValue(failed, source, actions);
  }
  if (ignored.length > 0) annotations[IGNORED_ERRORS_KEY] = ignored.join('; ');
  const warnings = actions.includes('Warn') ? failed.map((f) => `${source}: ${f.message}`) : [];
  const extras = { ...(warnings.length > 0 ? { warnings } : {}), ...(Object.keys(annotations).length > 0 ? { auditAnnotations: annotations } : {}) };
  if (denials.length === 0) return { allowed: true, ...extras };
  const first = actions.includes('Deny') ? failed[0] : undefined;
  const reason = first?.kind === 'denied' ? first.reason : 'Invalid';
  return { allowed: false, code: VALIDATION_REASONS[reason], reason, message: denials.join('; '), ...extras };
}
