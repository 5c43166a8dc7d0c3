import { DEFAULT_AUDIT_KEY } from '../admission/mode.js';
import type { ObjectOutcome, WebhookOutcome } from '../kube/evaluation/simulate.js';
import type { ReportSeverity } from '../policy/policy.js';

/** A result as OpenReports and wgpolicyk8s name it. */
export type ResultValue = 'pass' | 'fail' | 'warn' | 'error' | 'skip';

export const RESULT_VALUES: readonly ResultValue[] = ['pass', 'fail', 'warn', 'error', 'skip'];

/** What a reported rule (a validating entry or custom webhook) adds to each of its results. */
export interface ReportedRule {
  name: string;
  severity?: ReportSeverity;
  category?: string;
}

/** One rule's result on one object. */
export interface RuleResult {
  rule: string;
  result: ResultValue;
  /** The rule's message: the denial, the warnings, the audit annotation, or why it could not decide; none on pass. */
  message?: string;
}

/** A message longer than this is cut (with an ellipsis): a report holds thousands of them. */
export const MAX_MESSAGE_CHARS = 1024;

function cut(message: string): string {
  return message.length <= MAX_MESSAGE_CHARS ? message : `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…`;
}

/**
 * The result of one webhook's outcome: fail when it denies (enforce) or records a violation
 * (audit), warn when a warn-mode rule warns, error when the handler or a matchCondition could not
 * decide, skip when a matchCondition is false, pass otherwise; undefined when the rule does not
 * apply (its rules or selectors leave the object out).
 */
export function resultOf(outcome: WebhookOutcome): Omit<RuleResult, 'rule'> | undefined {
  switch (outcome.decision) {
    case 'skipped':
      if (outcome.skippedBy === 'matchCondition') return { result: 'skip', message: cut(outcome.why ?? '') };
      if (outcome.skippedBy === 'matchConditionError') return { result: 'error', message: cut(outcome.why ?? '') };
      return undefined;
    case 'timeout':
    case 'error':
      return { result: 'error', message: cut(outcome.why ?? outcome.message ?? outcome.decision) };
    case 'denied':
      return { result: 'fail', message: cut(outcome.message ?? 'denied without explanation') };
    case 'allowed': {
      if (outcome.warnings.length > 0) return { result: 'warn', message: cut(outcome.warnings.join('; ')) };
      // An audit-mode rule records its findings under policy-violation; a cel rule's own auditAnnotations are no finding.
      const violation = outcome.auditAnnotations[DEFAULT_AUDIT_KEY];
      if (violation !== undefined) return { result: 'fail', message: cut(violation) };
      return { result: 'pass' };
    }
  }
}

/** One result per reported rule that applies to the object, in the policy's order. */
export function resultsOf(outcome: ObjectOutcome, reported: ReadonlyMap<string, ReportedRule>): RuleResult[] {
  const results: RuleResult[] = [];
  for (const webhook of outcome.webhooks) {
    if (webhook.type !== 'validating' || !reported.has(webhook.webhook)) continue;
    const result = resultOf(webhook);
    if (result) results.push({ rule: webhook.webhook, ...result });
  }
  return results;
}
