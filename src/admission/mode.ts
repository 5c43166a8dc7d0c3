import { isQualifiedNamePart } from './kube-names.js';
import type { RuleMode, ValidationDecision } from './types.js';

/** kube-apiserver's advice for one warning: 120 characters or fewer (advice only: nothing is cut there). */
export const MAX_WARNING_LENGTH = 120;

/** The audit annotation key rules use by default (recorded as `<webhook>/policy-violation`). */
export const DEFAULT_AUDIT_KEY = 'policy-violation';

/**
 * Cuts `text` to at most `max` characters (code points), marking the cut with an ellipsis. For
 * handlers that want short warnings; the server itself cuts only where kube-apiserver does.
 */
export function truncateWarning(text: string, max = MAX_WARNING_LENGTH): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** A key kube-apiserver accepts after its `<webhook name>/` prefix; others are only logged and dropped. */
export function isValidAuditAnnotationKey(key: string): boolean {
  return isQualifiedNamePart(key);
}

/** How applyMode words its warnings and audit annotations. */
export interface ModeOptions {
  /** Prefix of each warning, so the user knows which rule spoke (usually the webhook name). */
  source?: string;
  /** Audit annotation key; default `policy-violation`. */
  auditKey?: string;
}

/**
 * The decision for a rule's findings under `mode`: nothing found allows; otherwise enforce
 * denies (403, the findings joined), warn allows with one warning per finding (whole: the
 * server cuts only where kube-apiserver would), audit allows with one audit annotation
 * holding all findings.
 */
export function applyMode(findings: readonly string[], mode: RuleMode, options: ModeOptions = {}): ValidationDecision {
  if (findings.length === 0) return { allowed: true };
  const message = findings.join('; ');
  switch (mode) {
    case 'enforce':
      return { allowed: false, code: 403, reason: 'Forbidden', message };
    case 'warn': {
      const prefix = options.source ? `${options.source}: ` : '';
      return { allowed: true, warnings: findings.map((finding) => prefix + finding) };
    }
    case 'audit': {
      const key = options.auditKey ?? DEFAULT_AUDIT_KEY;
      if (!isValidAuditAnnotationKey(key)) throw new Error(`audit annotation key "${key}" is not a valid qualified-name part`);
      return { allowed: true, auditAnnotations: { [key]: message } };
    }
  }
}
