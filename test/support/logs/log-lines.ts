/**
 * Every JSON line the suite's servers write is read here (the compiled server's stdout in
 * ChildServer, the in-process loggers of the harnesses) with a parser that refuses a repeated
 * key, and a line that names a key twice fails the test that was running when it was written.
 */
import type { Test } from 'tap';
import { DuplicateKeyError, parseStrictJson } from './strict-json.js';

export type LogRecord = Record<string, unknown>;

/**
 * The line `text` as an object, or undefined when it is no JSON object (a command's report, a
 * warning from Node). A line that repeats a key is still returned, as JSON.parse reads it, so
 * the waits on it go on; the running test fails with the line.
 */
export function readLogLine(text: string, source: string): LogRecord | undefined {
  let parsed: unknown;
  try {
    parsed = parseStrictJson(text);
  } catch (error) {
    parsed = looseParse(text);
    if (parsed === undefined) return undefined;
    const why = error instanceof DuplicateKeyError ? 'repeats a key (jq, Loki and most parsers keep only one of the two)' : 'is JSON the strict reader refused';
    const kind = `${String((parsed as LogRecord | null)?.['msg'])}: ${(error as Error).message.replace(/ at offset \d+$/, '')}`;
    report(kind, `${source} wrote a log line that ${why}: ${(error as Error).message}`, text);
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as LogRecord) : undefined;
}

function looseParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The tests running now, innermost last (tap runs a file's subtests one at a time). */
const running: Test[] = [];
/** Found while no test ran (a server started at module level, one stopping after its test). */
const unreported: { message: string; line: string }[] = [];
/** The kinds of line (message and repeated key) each test failed for: once each, a server under load writes thousands alike. */
const reported = new WeakMap<object, Set<string>>();
const NO_TEST = {};

function report(kind: string, message: string, line: string): void {
  const test = running.at(-1);
  const kinds = reported.get(test ?? NO_TEST) ?? new Set<string>();
  reported.set(test ?? NO_TEST, kinds);
  if (kinds.has(kind)) return;
  kinds.add(kind);
  if (test) test.fail(message, { line });
  else unreported.push({ message, line });
}

// Only in tap's test processes: importing tap elsewhere (a benchmark) would print TAP output.
if (process.env['TAP'] === '1') {
  const { t } = await import('tap');
  t.beforeEach((test) => {
    running.push(test);
    for (const { message, line } of unreported.splice(0)) test.fail(`${message} (written between tests, before this one started)`, { line });
  });
  t.afterEach((test) => {
    const at = running.lastIndexOf(test);
    if (at >= 0) running.splice(at, 1);
  });
}

process.on('exit', () => {
  if (unreported.length === 0) return;
  for (const { message, line } of unreported) process.stderr.write(`${message} (written while no test ran)\n${line}\n`);
  process.exitCode = 1;
});
