import { applyMode } from '../mode.js';
import type { FailurePolicy, RuleMode, ValidationDecision } from '../types.js';
import { VALIDATION_REASONS, type ValidationFinding } from './validation-program.js';

/** The audit annotation that records validation errors a failurePolicy of Ignore let through. */
export const IGNORED_ERRORS_KEY = 'failed-open';

/**
 * The decision for a rule's findings, as kube-apiserver's dispatcher makes it: an error counts
 * as a failed validation under failurePolicy Fail (with reason Invalid, 422) and is let through
 * under Ignore (recorded in an audit annotation); then the mode acts on what failed: enforce
 * denies (the code of the first), warn warns and audit annotates, so a warn rule never denies,
 * whatever its failurePolicy.
 */
export function celDecision(findings: readonly ValidationFinding[], mode: RuleMode, failurePolicy: FailurePolicy, source: string): ValidationDecision {
  const counted = findings.filter((f) => f.kind === 'denied' || failurePolicy === 'Fail');
  const ignored = findings.filter((f) => f.kind === 'error' && failurePolicy === 'Ignore');
  const decision = applyMode(
    counted.map((f) => f.message),
    mode,
    { source },
  );
  if (ignored.length > 0) decision.auditAnnotations = { ...decision.auditAnnotations, [IGNORED_ERRORS_KEY]: ignored.map((f) => f.message).join('; ') };
  const first = counted[0];
  if (decision.allowed || !first) return decision;
  const reason = first.kind === 'denied' ? first.reason : 'Invalid';
  return { ...decision, code: VALIDATION_REASONS[reason], reason };
}
