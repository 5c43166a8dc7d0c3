/** Cleaning of the free-form parts of an answer so kube-apiserver takes them as meant (local-cluster/CONTRACT.md 2.5). */
import { warningsAsShown } from '../admission/warning-text.js';

/** The name part of a Kubernetes qualified name: what may follow `<webhook name>/` in an audit key. */
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const MAX_NAME_PART = 63;

/**
 * What the user will see of these warnings: control characters (which make kube-apiserver drop
 * a warning silently) cleaned out, empty ones and repeats dropped, and cut only where
 * kube-apiserver cuts (admission/warning-text.ts).
 */
export function cleanWarnings(warnings: readonly unknown[] | undefined): string[] {
  return warningsAsShown(warnings);
}

export function isValidAuditKey(key: string): boolean {
  return key.length <= MAX_NAME_PART && QUALIFIED_NAME_PART.test(key);
}

export interface CleanedAnnotations {
  valid: Record<string, string>;
  /** Keys dropped because kube-apiserver would only log them (invalid key or non-string value). */
  dropped: string[];
}

/** Keeps the entries whose key becomes a qualified name as `<webhook>/<key>` and whose value is a string. */
export function cleanAuditAnnotations(annotations: Readonly<Record<string, unknown>> | undefined): CleanedAnnotations {
  const valid: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (isValidAuditKey(key) && typeof value === 'string') valid[key] = value;
    else dropped.push(key);
  }
  return { valid, dropped };
}
