/**
 * Regular expressions as Kubernetes runs them: RE2 syntax and semantics (Go's regexp package,
 * which CEL's `matches` and Kubernetes' `find`/`findAll` use), matched in time linear in the
 * input, whatever the pattern. JavaScript's engine backtracks: `^(a+)+$` on 30 characters of a
 * label value takes seconds, and its syntax differs (`(?i)`, `\A`, `\z`, `[[:alpha:]]`, `\pL`).
 * The engine is re2js, a port of RE2/J (chosen by measurement against the other engines: BENCHMARKS.md, "Rules and CEL").
 */
import { RE2JS } from 're2js';

export class RegexSyntaxError extends Error {
  override readonly name = 'RegexSyntaxError';
}

/** Patterns compiled so far, most recently used last; bounded because patterns may come from objects. */
const compiled = new Map<string, RE2JS>();
const MAX_CACHED = 512;

/** `pattern` compiled (cached); throws RegexSyntaxError with Go's wording (`error parsing regexp: ...`). */
export function compileRegex(pattern: string): RE2JS {
  const cached = compiled.get(pattern);
  if (cached) {
    // Re-inserted so the least recently used is the first to go.
    compiled.delete(pattern);
    compiled.set(pattern, cached);
    return cached;
  }
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(pattern);
  } catch (error) {
    throw new RegexSyntaxError(error instanceof Error ? error.message : String(error));
  }
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value as string);
  compiled.set(pattern, regex);
  return regex;
}

/** What is wrong with `pattern` (Go's words), or undefined when it compiles. */
export function regexProblem(pattern: string): string | undefined {
  try {
    compileRegex(pattern);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Go's MatchString: the pattern found anywhere in `text` (anchor it with ^ and $ for a whole match). */
export function regexMatches(text: string, pattern: string): boolean {
  return compileRegex(pattern).test(text);
}

/** Whether all of `text` matches `pattern`, as if it were written `^(?:pattern)$`. */
export function regexMatchesWhole(text: string, pattern: string): boolean {
  return compileRegex(pattern).testExact(text);
}

/** Go's FindString: the leftmost match, or "" when there is none. */
export function regexFind(text: string, pattern: string): string {
  const matcher = compileRegex(pattern).matcher(text);
  return matcher.find() ? (matcher.group() ?? '') : '';
}

/** Length in UTF-16 units of the code point at `index`. */
function codePointWidth(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code >= 0xd800 && code <= 0xdbff && index + 1 < text.length ? 2 : 1;
}

/**
 * Go's FindAllString(text, limit): successive non-overlapping matches, at most `limit` of them
 * (all when negative). An empty match right after the previous match is skipped, as in Go
 * (JavaScript and Java keep it: "a*" on "baaab" gives 4 matches there, 3 in Go).
 */
export function regexFindAll(text: string, pattern: string, limit = -1): string[] {
  const matcher = compileRegex(pattern).matcher(text);
  const found: string[] = [];
  let position = 0;
  let previousEnd = -1;
  while ((limit < 0 || found.length < limit) && position <= text.length && matcher.find(position)) {
    const start = matcher.start();
    const end = matcher.end();
    const empty = start === end;
    if (!empty || start !== previousEnd) found.push(text.slice(start, end));
    position = empty ? end + (end < text.length ? codePointWidth(text, end) : 1) : end;
    previousEnd = end;
  }
  return found;
}

/** Code points in `text` (what CEL's size() counts). */
export function codePointCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      count--;
      i++;
    }
  }
  return count;
}

/** cel-go's cost factors (common/cost.go), which Kubernetes' regex library uses too. */
const STRING_TRAVERSAL_COST_FACTOR = 0.1;
const REGEX_STRING_LENGTH_COST_FACTOR = 0.25;

/**
 * The cost units a regex call is charged, as cel-go and Kubernetes' library charge matches,
 * find and findAll: ceil((1 + size(text)) x 0.1) x ceil(size(pattern) x 0.25). RE2 runs in
 * time linear in the text for a given pattern, so this bounds the work.
 */
export function regexCost(text: string, pattern: string): number {
  const textCost = Math.ceil((1 + codePointCount(text)) * STRING_TRAVERSAL_COST_FACTOR);
  const patternCost = Math.ceil(codePointCount(pattern) * REGEX_STRING_LENGTH_COST_FACTOR);
  return textCost * patternCost;
}
