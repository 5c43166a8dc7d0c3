import { stringify } from 'yaml';
import { plainYaml } from './plain-yaml.js';

/** stringify(value), written directly when plainYaml() knows how (the usual decoded object). */
const yamlOf = (value: unknown): string => plainYaml(value) ?? stringify(value);

/**
 * A unified-style diff of two objects as YAML lines (`-` removed, `+` added, a line of context
 * each side), for showing what a mutating webhook's patch does to an object. Objects are small:
 * a plain longest-common-subsequence table is fast enough.
 */
export function objectDiff(before: unknown, after: unknown, context = 1): string[] {
  const a = yamlOf(before).trimEnd().split('\n');
  const b = yamlOf(after).trimEnd().split('\n');
  // lcs(i, j): the longest common subsequence of a[i..] and b[j..], in one flat table (one
  // allocation per diff rather than one per line: evaluate's text report diffs every patched object).
  const width = b.length + 1;
  const table = new Uint32Array((a.length + 1) * width);
  const lcs = (i: number, j: number): number => table[i * width + j]!;
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * width + j] = a[i] === b[j] ? lcs(i + 1, j + 1) + 1 : Math.max(lcs(i + 1, j), lcs(i, j + 1));
    }
  }
  const lines: { mark: ' ' | '-' | '+'; text: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push({ mark: ' ', text: a[i++]! });
      j++;
    } else if (j < b.length && (i === a.length || lcs(i, j + 1) >= lcs(i + 1, j))) {
      lines.push({ mark: '+', text: b[j++]! });
    } else {
      lines.push({ mark: '-', text: a[i++]! });
    }
  }
  // changedBefore[k]: changed lines among the first k, so "a change within `context` lines" is one subtraction, not a slice per line.
  const changedBefore = new Uint32Array(lines.length + 1);
  lines.forEach((line, index) => (changedBefore[index + 1] = changedBefore[index]! + (line.mark === ' ' ? 0 : 1)));
  const near = (index: number) => changedBefore[Math.min(lines.length, index + context + 1)]! - changedBefore[Math.max(0, index - context)]! > 0;
  const shown: string[] = [];
  let skipped = false;
  lines.forEach((line, index) => {
    if (line.mark !== ' ' || near(index)) {
      if (skipped && shown.length > 0) shown.push('  ...');
      shown.push(`${line.mark} ${line.text}`);
      skipped = false;
    } else skipped = true;
  });
  return shown;
}
