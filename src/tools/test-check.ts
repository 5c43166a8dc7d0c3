import { isDeepStrictEqual } from 'node:util';
import type { EvaluatedObject } from './evaluate-report.js';
import type { WebhookOutcome } from '../kube/evaluation/simulate.js';
import type { ExpectedDecision, Expectation } from './test-file.js';

export interface CheckedExpectation {
  expectation: Expectation;
  passed: boolean;
  /** What happened, in the expectation's own words (the decision), and why it failed. */
  got: string;
  problem?: string;
}

/** The decision vocabulary of test files for one webhook outcome. */
export function decisionOf(outcome: WebhookOutcome): ExpectedDecision {
  if (outcome.decision === 'skipped') return 'skipped';
  if (outcome.decision === 'timeout' || outcome.decision === 'error') return 'error';
  if (!outcome.allowed) return 'denied';
  if (outcome.warnings.length > 0) return 'warn';
  if (Object.keys(outcome.auditAnnotations).length > 0) return 'audit';
  return 'allowed';
}

export function resourceName(result: EvaluatedObject): string {
  const { request } = result.outcome;
  const name = request.name ?? result.manifest.object.metadata?.generateName ?? '';
  // The manifest's kind: a CONNECT request's kind is its options' (PodExecOptions).
  const kind = result.manifest.object.kind ?? request.kind.kind;
  return request.namespace && kind !== 'Namespace' ? `${kind}/${request.namespace}/${name}` : `${kind}/${name}`;
}

/** Whether `actual` has every field of `expected` (maps by key, lists element by element). */
export function containsFields(actual: unknown, expected: unknown, path = ''): string | undefined {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return `${path || '.'}: expected a list of ${expected.length}, got ${JSON.stringify(actual)}`;
    for (const [i, item] of expected.entries()) {
      const problem = containsFields(actual[i], item, `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return `${path || '.'}: expected a mapping, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      const problem = containsFields((actual as Record<string, unknown>)[key], value, path ? `${path}.${key}` : key);
      if (problem) return problem;
    }
    return undefined;
  }
  return isDeepStrictEqual(actual, expected) ? undefined : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

function mentions(outcome: WebhookOutcome, text: string): boolean {
  return [outcome.message ?? '', ...outcome.warnings, ...Object.values(outcome.auditAnnotations)].some((m) => m.includes(text));
}

/** Checks one expectation against the evaluated objects. */
export function checkExpectation(expectation: Expectation, results: readonly EvaluatedObject[]): CheckedExpectation {
  const result = results.find((r) => resourceName(r) === expectation.resource);
  if (!result) {
    return { expectation, passed: false, got: 'missing', problem: `no resource ${expectation.resource}; there are ${results.map(resourceName).join(', ')}` };
  }
  const outcome = result.outcome.webhooks.find((w) => w.webhook === expectation.webhook);
  if (!outcome) return { expectation, passed: false, got: 'missing', problem: `the policy has no webhook "${expectation.webhook}"` };
  const got = decisionOf(outcome);
  if (got !== expectation.decision) {
    return { expectation, passed: false, got, problem: `expected ${expectation.decision}, got ${got}${outcome.message ? `: ${outcome.message}` : outcome.why ? ` (${outcome.why})` : ''}` };
  }
  if (expectation.message !== undefined && !mentions(outcome, expectation.message)) {
    return { expectation, passed: false, got, problem: `no message contains "${expectation.message}"` };
  }
  if (expectation.patched) {
    const problem = containsFields(result.outcome.object, expectation.patched);
    if (problem) return { expectation, passed: false, got, problem: `after the patch, ${problem}` };
  }
  return { expectation, passed: true, got };
}
