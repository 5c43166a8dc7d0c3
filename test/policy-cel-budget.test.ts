import t from 'tap';
import { CelBudgetExceeded, EvaluationBudget } from '../src/policy/cel/budget.js';
import { compileExpression } from '../src/policy/cel/compile.js';
import { environmentWith, VALIDATION_VARIABLES } from '../src/policy/cel/environment.js';
import { toCel } from '../src/policy/cel/values.js';
import { runReview } from '../src/server/run-review.js';
import { admissionRequest, pod, webhookFrom } from './support/policy/policy-fixtures.js';

const env = environmentWith(VALIDATION_VARIABLES);

function compiled(source: string) {
  const result = compileExpression(env, source, 'any');
  if (!result.ok) throw new Error(result.problem);
  return result.expression;
}

const list = (n: number) => toCel({ items: Array.from({ length: n }, (_, i) => ({ name: `c${i}` })) });

t.test('every comprehension step is charged, nested ones included', async (t) => {
  const budget = new EvaluationBudget({ maxIterations: 1_000_000, maxCpuMilliseconds: 60_000 });
  const result = compiled('object.items.all(a, object.items.exists(b, b.name == a.name))').evaluate({ object: list(20) }, budget);
  t.equal(result, true);
  // all: 20 steps; exists stops at the match: 1 + 2 + ... + 20 = 210.
  t.equal(budget.steps, 20 + 210);
  const mapped = new EvaluationBudget({ maxIterations: 1_000_000, maxCpuMilliseconds: 60_000 });
  compiled('object.items.map(a, a.name).filter(n, n != "").size() == 20').evaluate({ object: list(20) }, mapped);
  t.equal(mapped.steps, 40, 'map and filter steps');
});

t.test('a quadratic rule on a large object stops at the step limit, even behind ||', async (t) => {
  const object = list(3000);
  for (const source of ['object.items.all(a, object.items.all(b, a.name != b.name || a == b))', 'object.items.all(a, object.items.all(b, true)) || true']) {
    const budget = new EvaluationBudget({ maxIterations: 50_000, maxCpuMilliseconds: 60_000 });
    t.throws(() => compiled(source).evaluate({ object }, budget), CelBudgetExceeded, source);
    t.ok(budget.steps <= 50_001, `stopped after ${budget.steps} steps`);
  }
});

t.test('the CPU-time limit stops a rule whose steps are each expensive', async (t) => {
  const budget = new EvaluationBudget({ maxIterations: 1e12, maxCpuMilliseconds: 1 });
  const object = list(3000);
  const error = t.throws(() => compiled('object.items.all(a, object.items.all(b, object.items.exists(c, c == b && c == a) || true))').evaluate({ object }, budget));
  t.match(error, { name: 'CelBudgetExceeded', message: /exceeded 1 ms of CPU/ });
});

t.test('a rule over its budget on the review path follows the failurePolicy (Fail: 500)', async (t) => {
  const webhook = webhookFrom(`webhooks:
  - name: unique-names
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "object.spec.containers.all(a, object.spec.containers.all(b, a == b || a.name != b.name))"
`);
  const containers = Array.from({ length: 1000 }, (_, i) => ({ name: `c${i}`, image: 'nginx' }));
  const run = await runReview(webhook, admissionRequest(pod({ containers })), 5000);
  t.match(run.verdict, { allowed: false, status: { code: 500, reason: 'InternalError' } });
  // 100000 steps take about 20 ms of CPU; under coverage instrumentation the CPU limit may come first.
  t.match(run.failure, /validation 0: evaluation exceeded (100000 comprehension steps|50 ms of CPU)/);
  const small = await runReview(webhook, admissionRequest(pod({ containers: containers.slice(0, 10) })), 5000);
  t.match(small.verdict, { allowed: true }, 'the same rule on a normal Pod is within budget');
});
