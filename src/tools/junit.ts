import type { CheckedExpectation } from './test-check.js';

/** XML 1.0 allows no control characters but tab, newline and carriage return. */
function withoutControlCharacters(text: string): string {
  return Array.from(text)
    .filter((c) => c.charCodeAt(0) >= 0x20 || c === '\t' || c === '\n' || c === '\r')
    .join('');
}

const escape = (text: string): string =>
  withoutControlCharacters(text).replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);

export interface SuiteResult {
  name: string;
  file: string;
  checks: CheckedExpectation[];
  /** A test whose policy or resources could not be read: one failing case saying why. */
  error?: string;
}

/** JUnit XML (the dialect Jenkins, GitLab and GitHub reporters read): one testsuite per test file. */
export function junitXml(suites: readonly SuiteResult[]): string {
  const failures = (s: SuiteResult) => (s.error ? 1 : s.checks.filter((c) => !c.passed).length);
  const tests = (s: SuiteResult) => (s.error ? 1 : s.checks.length);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="kube-admission-server test" tests="${suites.reduce((n, s) => n + tests(s), 0)}" failures="${suites.reduce((n, s) => n + failures(s), 0)}">`,
  ];
  for (const suite of suites) {
    lines.push(`  <testsuite name="${escape(suite.name)}" file="${escape(suite.file)}" tests="${tests(suite)}" failures="${failures(suite)}">`);
    if (suite.error) lines.push(`    <testcase name="load" classname="${escape(suite.name)}"><failure message="${escape(suite.error)}"/></testcase>`);
    for (const check of suite.checks) {
      const name = `${check.expectation.resource} ${check.expectation.webhook} ${check.expectation.decision}`;
      const body = check.passed ? '/>' : `><failure message="${escape(check.problem ?? '')}"/></testcase>`;
      lines.push(`    <testcase name="${escape(name)}" classname="${escape(suite.name)}"${body}`);
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}
