/**
 * Kubernetes' CEL library test cases (kubernetes-cel-library-tests.yaml) run as cel rules through
 * the policy path: each case becomes a policy file with one validation, loaded as the server
 * loads it and reviewed as the server reviews, and is judged by what its Go test expects.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { AuthorizationSource } from '../../../src/cel/authorization-answers.js';
import { parsePolicy } from '../../../src/policy/policy-file.js';
import { runReview } from '../../../src/server/review/run-handler.js';
import { admissionRequest, pod } from './policy-fixtures.js';

/** One case and what its Go test expects of it (exactly one of the expectations is set). */
export interface LibraryCase {
  name: string;
  expression: string;
  value?: string;
  error?: string;
  errorPattern?: string;
  compileErrors?: string[];
  evaluates?: boolean;
  cost?: { estimated: [number, number]; runtime: number };
}

export interface KnownDifference {
  name: string;
  reason: string;
}

export interface LibraryCases {
  source: string;
  cases: LibraryCase[];
  knownDifferences: KnownDifference[];
}

export function readLibraryCases(): LibraryCases {
  const text = readFileSync(new URL('./kubernetes-cel-library-tests.yaml', import.meta.url), 'utf8');
  const data = parse(text) as LibraryCases;
  return { ...data, knownDifferences: data.knownDifferences ?? [] };
}

/** What the policy path made of a case: refused at load (the problems), or the review's answer. */
export type Outcome = { loaded: false; problems: string[] } | { loaded: true; allowed: boolean; message: string };

/** cost_test.go's alwaysAllowAuthorizer. */
const ALLOW_ALL: AuthorizationSource = { known: () => ({ allowed: true }) };

/** The validation that shows a case's answer: the comparison with the expected value, else whether it evaluates. */
export function validationOf(c: LibraryCase): string {
  return c.value !== undefined ? `(${c.expression}) == ${c.value}` : `size([${c.expression}]) == 1`;
}

function policyOf(c: LibraryCase): string {
  return `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: library-case
    kind: cel
    failurePolicy: Fail
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: ${JSON.stringify(validationOf(c))}
        message: the validation is false
`;
}

export async function runCase(c: LibraryCase): Promise<Outcome> {
  const loaded = parsePolicy(policyOf(c), 'library-case.yaml', { authorization: ALLOW_ALL });
  if (!loaded.ok) return { loaded: false, problems: loaded.errors };
  const [webhook] = loaded.webhooks;
  if (!webhook) throw new Error(`${c.name}: the policy has no webhook`);
  const run = await runReview(webhook, admissionRequest(pod({ containers: [{ name: 'c', image: 'nginx' }] })), 5000);
  const { verdict } = run;
  return { loaded: true, allowed: verdict.allowed, message: verdict.allowed ? '' : (verdict.status?.message ?? run.failure ?? '') };
}

/** Why the outcome is not what the case's Go test expects, or undefined when it agrees. */
export function disagreement(c: LibraryCase, outcome: Outcome): string | undefined {
  if (c.compileErrors) {
    if (outcome.loaded) return 'compiles; Kubernetes refuses it';
    const missing = c.compileErrors.filter((pattern) => !outcome.problems.some((problem) => new RegExp(pattern).test(problem)));
    return missing.length ? `refused with ${JSON.stringify(outcome.problems.join('; '))}, which does not match ${missing.join(', ')}` : undefined;
  }
  if (!outcome.loaded) return `does not load: ${outcome.problems.join('; ')}`;
  if (c.error !== undefined || c.errorPattern !== undefined) {
    if (outcome.allowed) return 'evaluates without error; Kubernetes expects an error';
    const matches = c.error !== undefined ? outcome.message.endsWith(`resulted in error: ${c.error}`) : new RegExp(c.errorPattern!).test(outcome.message);
    return matches ? undefined : `fails with ${JSON.stringify(outcome.message)}`;
  }
  if (outcome.allowed) return undefined;
  return c.value !== undefined && outcome.message === 'the validation is false' ? `gives another value than ${c.value}` : `fails: ${outcome.message}`;
}
