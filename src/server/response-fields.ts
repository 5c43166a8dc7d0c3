/** Cleaning of the free-form parts of an answer so kube-apiserver takes them as meant (APISERVER-CONTRACT.md §2.5). */

/** kube-apiserver's advice: keep each warning to 120 characters or fewer. */
export const MAX_WARNING_CHARS = 120;
const ELLIPSIS = '...';

/** The name part of a Kubernetes qualified name: what may follow `<webhook name>/` in an audit key. */
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const MAX_NAME_PART = 63;

function truncate(text: string): string {
  const chars = Array.from(text);
  if (chars.length <= MAX_WARNING_CHARS) return text;
  return chars.slice(0, MAX_WARNING_CHARS - ELLIPSIS.length).join('') + ELLIPSIS;
}

/** Non-empty, at most 120 characters each (longer ones cut with "..."), duplicates dropped, order kept. */
export function cleanWarnings(warnings: readonly unknown[] | undefined): string[] {
  if (!warnings) return [];
  const seen = new Set<string>();
  for (const warning of warnings) {
    if (typeof warning !== 'string') continue;
    const text = truncate(warning.trim());
    if (text !== '') seen.add(text);
  }
  return [...seen];
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
