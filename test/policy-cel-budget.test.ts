// The cost budget, in Kubernetes' model (k8s.io/apiserver/pkg/apis/cel/config.go): a
// deterministic runtime cost against a limit per expression (PerCallLimit, 1,000,000) and a
// budget per rule (RuntimeCELCostBudget, 10,000,000); expressions whose worst case grows with the
// square of the object are refused at load; a CPU ceiling only as a reported last resort.
import t from 'tap';
import { CelCpuCeilingExceeded, DEFAULT_CEL_LIMITS, EvaluationBudget } from '../src/cel/budget.js';
import { compileExpression } from '../src/cel/compile.js';
import { environmentWith, VALIDATION_VARIABLES } from '../src/cel/environment.js';
import { toCel } from '../src/cel/values.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import { runReview } from '../src/server/review/run-handler.js';
import { admissionRequest, webhookFrom } from './support/policy/policy-fixtures.js';

const env = environmentWith(VALIDATION_VARIABLES);

function compiled(source: string) {
  const result = compileExpression(env, source, 'any');
  if (!result.ok) throw new Error(result.problem);
  return result.expression;
}

const items = (n: number) => toCel({ items: Array.from({ length: n }, (_, i) => ({ name: `c${i}`, ports: [80, 443] })) });

t.test('Kubernetes\' limits: 1,000,000 units per expression, 10,000,000 per rule', async (t) => {
  t.same(DEFAULT_CEL_LIMITS, { perExpressionCost: 1_000_000, ruleCost: 10_000_000, cpuCeilingMilliseconds: 3_000 });
});

t.test('each comprehension step is charged its node count, nested parts of an element included; the same object costs the same every time', async (t) => {
  const expression = compiled('object.items.all(a, a.ports.all(p, p > 0))');
  const costs = new Set<number>();
  for (let run = 0; run < 4; run++) {
    const budget = new EvaluationBudget();
    t.equal(expression.evaluate({ object: items(20) }, budget), true);
    costs.add(budget.units);
  }
  t.equal(costs.size, 1, 'four runs, one cost');
  const [units] = [...costs];
  // 20 outer steps and 40 inner ones, each charged its step's node count.
  t.ok(units! > 60 && units! < 60 * 20, `${units} units`);
});

t.test('a rule Kubernetes runs within its limits runs here too, whatever the machine\'s load (150,000 steps)', async (t) => {
  const webhook = webhookFrom(`webhooks:
  - name: many-items
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
    validations:
      - expression: "object.data.items.all(i, i != '')"
`);
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'team-a' }, data: { items: Array.from({ length: 150_000 }, () => 'x') } };
  const run = await runReview(webhook, admissionRequest(configMap), 30_000);
  t.match(run.verdict, { allowed: true });
});

t.test('one expression over its limit is an error of that expression only (cel-go\'s words); the others still decide', async (t) => {
  const webhook = webhookFrom(`webhooks:
  - name: long-strings
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
    validations:
      - expression: "!object.data.a.contains(object.data.b)"
        message: a must not contain b
      - expression: "object.data.a.startsWith('x')"
        message: a starts with x
`);
  // contains costs ceil(|a| x 0.1) x ceil(|b| x 0.1) = 2,000 x 2,000 = 4,000,000 > 1,000,000: refused before it runs.
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'team-a' }, data: { a: 'a'.repeat(20_000), b: 'b'.repeat(20_000) } };
  const run = await runReview(webhook, admissionRequest(configMap), 30_000);
  t.match(run.verdict, {
    allowed: false,
    status: { code: 422, message: "expression '!object.data.a.contains(object.data.b)' resulted in error: operation cancelled: actual cost limit exceeded; a starts with x" },
  });
});

t.test('the rule\'s budget, once spent, ends the rule with kube-apiserver\'s message, under its failurePolicy', async (t) => {
  // Each validation costs about 900,000 units (under the per-expression limit); twelve are more than 10,000,000.
  const validation = `      - expression: "object.data.items.all(i, i != '')"\n`;
  const body = (failurePolicy: string) => `webhooks:
  - name: many-validations
    kind: cel
    failurePolicy: ${failurePolicy}
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
    validations:
${validation.repeat(12)}`;
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'team-a' }, data: { items: Array.from({ length: 225_000 }, () => 'x') } };
  const fail = await runReview(webhookFrom(body('Fail')), admissionRequest(configMap), 60_000);
  t.match(fail.verdict, { allowed: false, status: { code: 422, message: 'validation failed due to running out of cost budget, no further validation rules will be run' } });
  const ignore = await runReview(webhookFrom(body('Ignore')), admissionRequest(configMap), 60_000);
  t.match(ignore.verdict, { allowed: true, auditAnnotations: { 'failed-open': 'validation failed due to running out of cost budget, no further validation rules will be run' } });
});

t.test('expressions whose worst case is quadratic in the object are refused at load, with where the loops are', async (t) => {
  const result = parsePolicy(
    `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: unique-names
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    params: { registries: [a.io, b.io] }
    variables:
      - name: names
        expression: "object.spec.containers.map(c, c.name)"
    validations:
      - expression: "object.spec.containers.all(a, object.spec.containers.exists_one(b, b.name == a.name))"
      - expression: "object.spec.containers.all(a, a.name in variables.names)"
      - expression: "object.spec.containers.all(c, !has(c.ports) || c.ports.all(p, p.containerPort > 0))"
      - expression: "object.spec.containers.all(c, params.registries.exists(r, c.image.startsWith(r)))"
`,
    'p.yaml',
  );
  t.notOk(result.ok);
  const errors = result.ok ? [] : result.errors;
  t.equal(errors.length, 2, 'the loop over parts of each element and the loop over params are linear: accepted');
  t.match(errors[0], /^p\.yaml:12:21: webhooks\[0\]\.validations\[0\]\.expression: CEL expression has a worst-case cost that grows with the square of the object's size: "object\.spec\.containers\.exists_one\(b, b\.name == a\.name\)" runs for every item of "object\.spec\.containers\.all\(a, .*1,048,575 items; the limit per expression is 1,000,000\)/);
  t.match(errors[1], /^p\.yaml:13:21: webhooks\[0\]\.validations\[1\]\.expression: CEL expression has a worst-case cost that grows with the square/);
});

t.test('the CPU ceiling is a last resort, and says so when it fires', async (t) => {
  const budget = new EvaluationBudget({ perExpressionCost: 1e12, ruleCost: 1e12, cpuCeilingMilliseconds: 0.001 });
  const object = toCel({ items: Array.from({ length: 3000 }, (_, i) => `item-${i}`.repeat(50)) });
  const error = t.throws(() => compiled("object.items.all(i, i.matches('^(item-[0-9]+)+$'))").evaluate({ object }, budget));
  t.type(error, CelCpuCeilingExceeded);
  t.match(error, { message: /^stopped by the last-resort CPU guard after 0\.001 ms of CPU, at \d+ cost units: the cost budget did not bound this evaluation/ });
});
