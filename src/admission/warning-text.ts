/**
 * Warnings as kube-apiserver keeps them (k8s.io/apiserver pkg/endpoints/filters/warning.go and
 * apimachinery's NewWarningHeader). It drops, without a word, a warning that is empty or holds a
 * control character (a line break, a tab) or invalid UTF-8; it drops repeated texts; and once
 * the warnings of a request pass 4096 characters it cuts every one to 256 and drops those past
 * the total. Nothing else is cut: the 120 characters of the docs are advice. The server cleans
 * what rules and handlers produce with these, so the user sees what `evaluate` and `test` show.
 */

/** Go's unicode.IsControl: C0, DEL and C1, which is Unicode's general category Cc. */
const CONTROL_CHARACTER = /\p{Cc}/u;
const CONTROL_RUNS = /\s*\p{Cc}+\s*/gu;

/** UTF-16 halves without their other half: invalid UTF-8 once encoded, U+FFFD once Go decodes the JSON. */
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/gu;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;

export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text);
}

/**
 * The text with each run of control characters (and the spaces around it) turned into one
 * space, trimmed, and unpaired UTF-16 surrogates replaced by U+FFFD (what Go decodes them to),
 * so kube-apiserver shows it instead of dropping it. "" when nothing is left.
 */
export function cleanWarningText(text: string): string {
  return text.replace(LONE_SURROGATES, '\uFFFD').replace(CONTROL_RUNS, ' ').trim();
}

/** What NewWarningHeader accepts: valid UTF-8 (no unpaired surrogate) and no control character. */
function isValidWarningText(text: string): boolean {
  return !hasControlCharacter(text) && !LONE_SURROGATE.test(text);
}

export interface WarningLimits {
  /** Characters of all warnings together before every one is cut. */
  totalRunes: number;
  /** What each warning is cut to once cutting starts. */
  itemRunes: number;
}

export const KUBE_APISERVER_WARNING_LIMITS: Readonly<WarningLimits> = Object.freeze({ totalRunes: 4 * 1024, itemRunes: 256 });

const runes = (text: string): number => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};

function cut(text: string, max: number): string {
  let out = '';
  let count = 0;
  for (const char of text) {
    if (count++ === max) break;
    out += char;
  }
  return out;
}

/**
 * What the API client receives for these warnings, as kube-apiserver's recorder writes them:
 * empty and control-character texts dropped, repeats dropped, order kept, and past the total
 * every warning cut to `itemRunes` and those beyond the total dropped.
 */
export function recordWarnings(texts: readonly string[], limits: WarningLimits = KUBE_APISERVER_WARNING_LIMITS): string[] {
  const seen = new Set<string>();
  const ordered: string[] = [];
  let written: string[] = [];
  let total = 0;
  let truncating = false;
  for (const text of texts) {
    if (text.length === 0) continue;
    if (truncating && total >= limits.totalRunes) break;
    if (seen.has(text)) continue;
    seen.add(text);
    ordered.push(text);
    if (!isValidWarningText(text)) continue;
    const length = runes(text);
    if (truncating) {
      const shown = length > limits.itemRunes ? cut(text, limits.itemRunes) : text;
      total += Math.min(length, limits.itemRunes);
      written.push(shown);
    } else if (total + length <= limits.totalRunes) {
      total += length;
      written.push(text);
    } else {
      truncating = true;
      total = 0;
      written = [];
      for (const earlier of ordered) {
        if (!isValidWarningText(earlier)) continue;
        const earlierLength = runes(earlier);
        written.push(earlierLength > limits.itemRunes ? cut(earlier, limits.itemRunes) : earlier);
        total += Math.min(earlierLength, limits.itemRunes);
      }
    }
  }
  return written;
}

/** Warnings cleaned of what kube-apiserver would drop them for, then recorded as it records them. */
export function warningsAsShown(texts: readonly unknown[] | undefined): string[] {
  if (!texts) return [];
  const cleaned = texts.filter((t): t is string => typeof t === 'string').map(cleanWarningText);
  return recordWarnings(cleaned);
}
