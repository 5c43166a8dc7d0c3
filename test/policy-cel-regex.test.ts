// Regular expressions as Kubernetes runs them (RE2 syntax and semantics, linear time, cost
// charged), in CEL rules and in requireLabels. Expected values marked "Kubernetes" come from
// k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/validation_test.go ("stdlib regex
// functions", "unicode strings") and k8s.io/apiserver pkg/cel/library/cost_test.go.
import t from 'tap';
import { EvaluationBudget } from '../src/cel/budget.js';
import { compileExpression } from '../src/cel/compile.js';
import { environmentWith, VALIDATION_VARIABLES } from '../src/cel/environment.js';
import { toCel } from '../src/cel/values.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import { admissionRequest, pod, review, webhookFrom } from './support/policy/policy-fixtures.js';

const env = environmentWith(VALIDATION_VARIABLES);

function run(source: string, object: unknown = {}, budget = new EvaluationBudget()): unknown {
  const compiled = compileExpression(env, source, 'any');
  if (!compiled.ok) throw new Error(`${source}: ${compiled.problem}`);
  return compiled.expression.evaluate({ object: toCel(object), variables: {} }, budget);
}

t.test('find and findAll give what Kubernetes expects', async (t) => {
  const object = { str: 'this is a 123 string 456' };
  const valid = [
    "object.str.find('[0-9]+') == '123'",
    "object.str.find('[0-9]+') != '456'",
    "object.str.find('xyz') == ''",
    "object.str.findAll('[0-9]+') == ['123', '456']",
    "object.str.findAll('[0-9]+', 0) == []",
    "object.str.findAll('[0-9]+', 1) == ['123']",
    "object.str.findAll('[0-9]+', 2) == ['123', '456']",
    "object.str.findAll('[0-9]+', 3) == ['123', '456']",
    "object.str.findAll('[0-9]+', -1) == ['123', '456']",
    "object.str.findAll('xyz') == []",
    "object.str.findAll('xyz', 1) == []",
    // Kubernetes, "unicode strings"
    "'Rook takes 👑'.matches('^[^0-9]*$')",
    "!'Rook takes 👑'.matches('^[0-9]*$')",
  ];
  for (const source of valid) t.equal(run(source, object), true, source);
});

t.test('RE2 syntax and semantics, not JavaScript\'s', async (t) => {
  const cases: [string, unknown][] = [
    ["'ABC'.matches('(?i)^abc$')", true],
    ["'abc'.matches('\\\\Aabc\\\\z')", true],
    ["'abc\\n'.matches('abc\\\\z')", false],
    ["'abc'.matches('^[[:alpha:]]+$')", true],
    ["'héllo'.matches('^\\\\pL+$')", true],
    // `.` is one code point, not one UTF-16 half.
    ["'😀'.matches('^.$')", true],
    ["matches('abc', 'b')", true],
    // Go's FindAllString: an empty match right after the previous match is not reported.
    ["'baaab'.findAll('a*')", ['', 'aaa', '']],
    ["'a😀b'.findAll('')", ['', '', '', '']],
  ];
  for (const [source, expected] of cases) t.same(run(source), expected, source);
});

t.test('a pattern that backtracks for ever in JavaScript runs in linear time, and its cost is charged', { timeout: 60_000 }, async (t) => {
  const value = `${'a'.repeat(40)}!`;
  const budget = new EvaluationBudget();
  t.equal(run("object.metadata.labels.team.matches('^(a+)+$')", { metadata: { labels: { team: value } } }, budget), false);
  // ceil((1 + 41) x 0.1) x ceil(8 x 0.25) = 5 x 2
  t.equal(budget.units, 10, 'the regex cost is charged to the budget');
  // Kubernetes cost_test: "'abc 123 def 123'.find('123')" costs 2.
  const findBudget = new EvaluationBudget();
  run("'abc 123 def 123'.find('123')", {}, findBudget);
  t.equal(findBudget.units, 2);
});

t.test('an invalid literal pattern refuses the policy at load, with the line; a computed one is an evaluation error', async (t) => {
  const result = parsePolicy(
    `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: bad-pattern
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "object.metadata.name.find(')') == ''"
      - expression: "object.metadata.name.matches('x++')"
      - expression: "matches(object.metadata.name, '[a')"
`,
    'p.yaml',
  );
  t.notOk(result.ok);
  t.same(!result.ok && result.errors, [
    'p.yaml:8:21: webhooks[0].validations[0].expression: CEL expression has an invalid find argument ")": error parsing regexp: unexpected ): `)` (at column 27)',
    'p.yaml:9:21: webhooks[0].validations[1].expression: CEL expression has an invalid matches argument "x++": error parsing regexp: invalid nested repetition operator: `++` (at column 30)',
    'p.yaml:10:21: webhooks[0].validations[2].expression: CEL expression has an invalid matches argument "[a": error parsing regexp: missing closing ]: `[a` (at column 31)',
  ]);
  t.throws(() => run("'x'.find(object.p)", { p: '(' }), { name: 'CelEvaluationError', message: /Illegal regex: error parsing regexp: missing closing \): `\(`/ });
  t.throws(() => run("'x'.matches(object.p)", { p: '(' }), { name: 'CelEvaluationError', message: /error parsing regexp: missing closing \)/ });
});

t.test('requireLabels patterns are RE2 too: Kubernetes syntax, refused at load when invalid', async (t) => {
  const webhook = webhookFrom(`webhooks:
  - name: team-label
    kind: requireLabels
    params:
      labels:
        - { key: team, pattern: "[[:alpha:]]+" }
        - { key: tier, pattern: "(?i)prod|dev" }
`);
  t.same(await review(webhook, admissionRequest(pod({ containers: [] }, { team: 'shop', tier: 'PROD' }))), { allowed: true });
  t.match(await review(webhook, admissionRequest(pod({ containers: [] }, { team: 'shop1', tier: 'staging' }))), {
    allowed: false,
    message: /label "team" value "shop1" does not match the pattern \[\[:alpha:\]\]\+; .*label "tier" value "staging" does not match/,
  });
  const result = parsePolicy(
    `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: team-label
    kind: requireLabels
    params:
      labels:
        - { key: team, pattern: "(a" }
`,
    'p.yaml',
  );
  t.same(!result.ok && result.errors, [
    'p.yaml:8:33: webhooks[0].params.labels[0].pattern: is not a valid regular expression (RE2 syntax, as Kubernetes uses): error parsing regexp: missing closing ): `(a`',
  ]);
});
