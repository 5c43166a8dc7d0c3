// Errors in cel rules decided as kube-apiserver decides them for a ValidatingAdmissionPolicy
// (plugin/policy/validating/validator.go, dispatcher.go): each validation on its own, the
// failurePolicy per erroring validation, lazy variables, and the error's text in the message.
// The cases follow validator_test.go ("test fail with failurepolicy ignore with multiple
// validations", "test error with failurepolicy nil", ...).
import t from 'tap';
import { runReview } from '../src/server/review/run-handler.js';
import { admissionRequest, pod, webhookFrom } from './support/policy/policy-fixtures.js';

function rule(options: { mode?: string; failurePolicy?: string; variables?: string; validations: string }): string {
  return `webhooks:
  - name: team-rule
    kind: cel
${options.mode ? `    mode: ${options.mode}\n` : ''}${options.failurePolicy ? `    failurePolicy: ${options.failurePolicy}\n` : ''}    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
${options.variables ? `    variables:\n${options.variables}` : ''}    validations:
${options.validations}`;
}

// Validation 0 errors on a Pod without a team label (no such key); validation 1 is false for it.
const ERRORING_THEN_FALSE = `      - expression: "object.metadata.labels.team != ''"
        message: team must not be empty
      - expression: "has(object.metadata.labels.owner)"
        message: every Pod needs an owner label
        reason: Forbidden
`;

const unlabelled = () => admissionRequest(pod({ containers: [] }, { app: 'web' }));

t.test('failurePolicy Ignore lets an erroring validation through and still applies the others', async (t) => {
  const run = await runReview(webhookFrom(rule({ failurePolicy: 'Ignore', validations: ERRORING_THEN_FALSE })), unlabelled(), 1000);
  t.match(run.verdict, { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'every Pod needs an owner label' } });
  t.match(run.verdict.auditAnnotations, { 'failed-open': /^expression 'object.metadata.labels.team != ''' resulted in error: / }, 'the ignored error is recorded');
});

t.test('failurePolicy Fail turns an erroring validation into a failure with kube-apiserver\'s words, next to the others', async (t) => {
  const run = await runReview(webhookFrom(rule({ failurePolicy: 'Fail', validations: ERRORING_THEN_FALSE })), unlabelled(), 1000);
  t.equal(run.verdict.allowed, false);
  t.match(run.verdict.status, {
    // The first failing validation decides the code: an error is Invalid (422), as in kube-apiserver.
    code: 422,
    reason: 'Invalid',
    message: /^expression 'object.metadata.labels.team != ''' resulted in error: .*team.*; every Pod needs an owner label$/,
  });
  t.equal(run.failure, undefined, 'a rule error is a policy answer, not a failed call (500)');
});

t.test('mode warn never denies on an error, even with failurePolicy Fail: it warns', async (t) => {
  const run = await runReview(webhookFrom(rule({ mode: 'warn', failurePolicy: 'Fail', validations: ERRORING_THEN_FALSE })), unlabelled(), 1000);
  t.equal(run.verdict.allowed, true);
  t.match(run.verdict.warnings, [/^team-rule: expression 'object.metadata.labels.team != ''' resulted in error: /, 'team-rule: every Pod needs an owner label']);
});

t.test('variables are lazy: an erroring variable no validation reads fails nothing', async (t) => {
  const webhook = webhookFrom(
    rule({
      variables: `      - name: team
        expression: "object.metadata.labels.team"
      - name: isTeamPod
        expression: "has(object.metadata.labels.team)"
`,
      validations: `      - expression: "!variables.isTeamPod || variables.team.startsWith('t-')"
        message: team labels start with t-
`,
    }),
  );
  t.match((await runReview(webhook, unlabelled(), 1000)).verdict, { allowed: true }, 'the untaken branch never evaluates variables.team');
  const badTeam = admissionRequest(pod({ containers: [] }, { team: 'shop' }));
  t.match((await runReview(webhook, badTeam, 1000)).verdict, { allowed: false, status: { message: 'team labels start with t-' } });
});

t.test('a variable that errors where it is read gives kube-apiserver\'s composited-variable error', async (t) => {
  const webhook = webhookFrom(
    rule({
      variables: `      - name: team
        expression: "object.metadata.labels.team"
`,
      validations: `      - expression: "variables.team.startsWith('t-')"
      - expression: "variables.team != 'root'"
`,
    }),
  );
  const run = await runReview(webhook, unlabelled(), 1000);
  t.match(run.verdict, {
    allowed: false,
    status: {
      code: 422,
      message:
        /^expression 'variables.team.startsWith\('t-'\)' resulted in error: composited variable "team" fails to evaluate: .*team.*; expression 'variables.team != 'root'' resulted in error: composited variable "team" fails to evaluate: /,
    },
  });
});

t.test('messageExpression results kube-apiserver would not show fall back to message', async (t) => {
  // validator_test.go: multi-line, longer than 5 KiB, null, empty: the message is used.
  const cases: [string, string][] = [
    ["'hello\\nthere'", 'test1'],
    ['dyn(null)', 'test1'],
    ["'  '", 'test1'],
    ["'  evaluated message  '", 'evaluated message'],
  ];
  for (const [messageExpression, expected] of cases) {
    const webhook = webhookFrom(
      rule({
        validations: `      - expression: "false"
        message: test1
        messageExpression: ${JSON.stringify(messageExpression)}
`,
      }),
    );
    t.match((await runReview(webhook, unlabelled(), 1000)).verdict, { allowed: false, status: { message: expected } }, messageExpression);
  }
  const tooLong = webhookFrom(
    rule({
      validations: `      - expression: "false"
        message: test1
        messageExpression: "params.long"
`,
    }).replace('    rules:', `    params: { long: "${'x'.repeat(5 * 1024 + 1)}" }\n    rules:`),
  );
  t.match((await runReview(tooLong, unlabelled(), 1000)).verdict, { status: { message: 'test1' } }, 'over 5 KiB');
  const exactly = webhookFrom(
    rule({
      validations: `      - expression: "false"
        message: test1
        messageExpression: "params.long"
`,
    }).replace('    rules:', `    params: { long: "${'x'.repeat(5 * 1024)}" }\n    rules:`),
  );
  t.match((await runReview(exactly, unlabelled(), 1000)).verdict, { status: { message: 'x'.repeat(5 * 1024) } }, 'exactly 5 KiB is shown');
});
