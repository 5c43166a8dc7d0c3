// The authorizer library (k8s.io/apiserver pkg/cel/library/authz.go) answered by a source of
// answers, against the expected values of kube-apiserver's own tests
// (pkg/admission/plugin/cel/condition_test.go: "test authorizer allow resource check", "... with
// all fields", "... with parse failures", "... one incorrect field", "reason", "error", "path",
// "request resource", "subresource request resource", "serviceAccount"), its cost (cost.go: a
// check costs 350,000, two per expression), and what this server adds: checks asked in rounds,
// and a check nobody could answer failing its expression so the failurePolicy decides.
import t from 'tap';
import { EvaluationBudget } from '../src/cel/budget.js';
import { compileExpression } from '../src/cel/compile.js';
import { environmentWith, VALIDATION_VARIABLES } from '../src/cel/environment.js';
import { withAuthorizationAnswers, type AskResult, type AuthorizationSource } from '../src/cel/authorization-answers.js';
import type { AuthorizationAnswer, AuthorizationQuestion } from '../src/cel/library/authorizer.js';
import { requestAuthorizer } from '../src/cel/request-authorizer.js';
import type { AdmissionRequest } from '../src/admission/types.js';
import { runReview } from '../src/server/review/run-handler.js';
import { admissionRequest, pod, webhookFrom } from './support/policy/policy-fixtures.js';

const env = environmentWith(VALIDATION_VARIABLES);

type Attributes = Omit<AuthorizationQuestion, 'user'> & { user?: AuthorizationQuestion['user'] };

/**
 * condition_test.go's fakeAuthorizer: the answer of `match` when a check's attributes equal its
 * record (the user too when the record names one), else the default. Counts what it was asked.
 */
class FakeAuthorizer implements AuthorizationSource {
  readonly asked: AuthorizationQuestion[][] = [];
  constructor(
    readonly fallback: AuthorizationAnswer,
    readonly match?: { record: Attributes; answer: AuthorizationAnswer },
  ) {}
  known(): undefined {
    return undefined;
  }
  async ask(questions: readonly AuthorizationQuestion[]): Promise<AskResult[]> {
    this.asked.push([...questions]);
    return questions.map((q) => this.answer(q));
  }
  answer(question: AuthorizationQuestion): AuthorizationAnswer {
    if (!this.match) return this.fallback;
    const { user, ...attributes } = question;
    const { user: wantedUser, ...wanted } = this.match.record;
    const same = JSON.stringify(sorted(attributes)) === JSON.stringify(sorted(wanted)) && (!wantedUser || JSON.stringify(wantedUser) === JSON.stringify({ username: user.username, groups: user.groups }));
    return same ? this.match.answer : this.fallback;
  }
}
const sorted = (o: object) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

const ALLOW: AuthorizationAnswer = { allowed: true };
const DENY: AuthorizationAnswer = { allowed: false, denied: true };
const allowMatch = (record: Attributes) => new FakeAuthorizer(DENY, { record, answer: ALLOW });
const denyAll = new FakeAuthorizer({ allowed: false, denied: true, reason: 'fake reason' });
const errorAll = new FakeAuthorizer({ allowed: false, error: 'fake authz error' });

/** condition_test.go's newValidAttribute and endpointCreateAttributes: namespace default, endpoints1. */
function endpointsRequest(subResource?: string): AdmissionRequest {
  const object = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'endpoints1', namespace: 'default' } };
  const request = admissionRequest(object, { namespace: 'default', ...(subResource ? { operation: 'UPDATE' as const, oldObject: object } : {}) });
  return { ...request, resource: { group: '', version: 'v1', resource: 'endpoints' }, ...(subResource ? { subResource } : {}), userInfo: { username: 'alice', groups: ['system:authenticated'] } };
}

async function evaluate(source: string, authorizer: AuthorizationSource | undefined, request = endpointsRequest()): Promise<unknown> {
  const compiled = compileExpression(env, source, 'any');
  if (!compiled.ok) throw new Error(`${source}: ${compiled.problem}`);
  const run = (authorize: Parameters<typeof requestAuthorizer>[1]) => compiled.expression.evaluate({ authorizer: requestAuthorizer(request, authorize), variables: {} }, new EvaluationBudget());
  return await withAuthorizationAnswers(authorizer, new AbortController().signal, run);
}

t.test("condition_test.go's authorizer cases give its expected values", async (t) => {
  const cases: [string, string, AuthorizationSource, AdmissionRequest | undefined, unknown][] = [
    ['allow resource check', "authorizer.group('').resource('endpoints').check('create').allowed()", allowMatch({ resource: 'endpoints', verb: 'create' }), undefined, true],
    ['allow resource check: errored', "authorizer.group('').resource('endpoints').check('create').errored()", allowMatch({ resource: 'endpoints', verb: 'create' }), undefined, false],
    [
      'allow resource check with all fields',
      "authorizer.group('apps').resource('deployments').fieldSelector('foo=bar').labelSelector('apple=banana').subresource('status').namespace('test').name('backend').check('create').allowed()",
      allowMatch({ group: 'apps', resource: 'deployments', subresource: 'status', namespace: 'test', name: 'backend', verb: 'create', fieldSelector: 'foo=bar', labelSelector: 'apple=banana' }),
      undefined,
      true,
    ],
    [
      // The selectors go as they are written: kube-apiserver parses them, and a parse failure is no error of the check.
      'allow resource check with parse failures',
      "authorizer.group('apps').resource('deployments').fieldSelector('foo badoperator bar').labelSelector('apple badoperator banana').subresource('status').namespace('test').name('backend').check('create').allowed()",
      allowMatch({ group: 'apps', resource: 'deployments', subresource: 'status', namespace: 'test', name: 'backend', verb: 'create', fieldSelector: 'foo badoperator bar', labelSelector: 'apple badoperator banana' }),
      undefined,
      true,
    ],
    [
      'not allowed resource check one incorrect field',
      "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').allowed()",
      allowMatch({ group: 'apps', resource: 'deployments-xxxx', subresource: 'status', namespace: 'test', name: 'backend', verb: 'create' }),
      undefined,
      false,
    ],
    ['reason', "authorizer.group('').resource('endpoints').check('create').reason() == 'fake reason'", denyAll, undefined, true],
    ['error: errored', "authorizer.group('').resource('endpoints').check('create').errored()", errorAll, undefined, true],
    ['error: error', "authorizer.group('').resource('endpoints').check('create').error() == 'fake authz error'", errorAll, undefined, true],
    ['error: allowed', "authorizer.group('').resource('endpoints').check('create').allowed()", errorAll, undefined, false],
    ['allow path check', "authorizer.path('/healthz').check('get').allowed()", allowMatch({ path: '/healthz', verb: 'get' }), undefined, true],
    ['decision is denied path check', "authorizer.path('/healthz').check('get').allowed() == false", denyAll, undefined, true],
    [
      'request resource authorizer allow check',
      "authorizer.requestResource.check('custom-verb').allowed()",
      allowMatch({ resource: 'endpoints', namespace: 'default', name: 'endpoints1', verb: 'custom-verb' }),
      endpointsRequest(),
      true,
    ],
    [
      'subresource request resource authorizer allow check',
      "authorizer.requestResource.check('custom-verb').allowed()",
      allowMatch({ resource: 'endpoints', subresource: 'status', namespace: 'default', name: 'endpoints1', verb: 'custom-verb' }),
      endpointsRequest('status'),
      true,
    ],
    [
      'serviceAccount authorizer allow check',
      "authorizer.serviceAccount('default', 'test-serviceaccount').group('').resource('endpoints').namespace('default').name('endpoints1').check('custom-verb').allowed()",
      allowMatch({
        user: { username: 'system:serviceaccount:default:test-serviceaccount', groups: ['system:serviceaccounts', 'system:serviceaccounts:default'] },
        resource: 'endpoints',
        namespace: 'default',
        name: 'endpoints1',
        verb: 'custom-verb',
      }),
      undefined,
      true,
    ],
  ];
  for (const [name, source, authorizer, request, expected] of cases) t.equal(await evaluate(source, authorizer, request), expected, name);
});

t.test('the check is asked for the request\'s user, with its uid, groups and extra, as kube-apiserver passes them on', async (t) => {
  const authorizer = new FakeAuthorizer(ALLOW);
  const request = { ...endpointsRequest(), userInfo: { username: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } } };
  t.equal(await evaluate("authorizer.group('apps').resource('deployments').namespace('team-a').check('delete').allowed()", authorizer, request), true);
  t.same(authorizer.asked, [[{ user: { username: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } }, verb: 'delete', group: 'apps', resource: 'deployments', namespace: 'team-a' }]]);
});

t.test("authz.go's argument errors", async (t) => {
  const any = new FakeAuthorizer(ALLOW);
  const cases: [string, RegExp][] = [
    ["authorizer.path('').check('get').allowed()", /path must not be empty/],
    ["authorizer.path('  ').check('get').allowed()", /path must not be empty/],
    ["authorizer.group('apps').resource('').check('get').allowed()", /resource must not be empty/],
    ["authorizer.group('apps').resource('  ').check('get').allowed()", /resource must not be empty/],
    ["authorizer.serviceAccount('not@a#valid!namespace', 'validname').group('').resource('pods').check('get').allowed()", /Invalid service account namespace/],
    ["authorizer.serviceAccount('valid', 'invalid@*name').group('').resource('pods').check('get').allowed()", /Invalid service account name/],
  ];
  for (const [source, error] of cases) await t.rejects(evaluate(source, any), { message: error }, source);
  t.same(any.asked, [], 'nothing was asked');
});

t.test('a check costs 350,000 units: two fit in one expression, a third passes the per-expression limit (cost.go)', async (t) => {
  const check = (verb: string) => `authorizer.group('').resource('pods').check('${verb}').allowed()`;
  t.equal(await evaluate(`${check('get')} && ${check('list')}`, new FakeAuthorizer(ALLOW)), true);
  await t.rejects(evaluate(`${check('get')} && ${check('list')} && ${check('watch')}`, new FakeAuthorizer(ALLOW)), { message: /actual cost limit exceeded/ });
});

t.test('checks are asked in rounds: together when independent, one more round for a check that depends on another', async (t) => {
  const authorizer = allowMatch({ resource: 'pods', verb: 'get' });
  const source = "authorizer.group('').resource('pods').check('get').allowed() ? authorizer.group('').resource('pods').check('delete').allowed() : authorizer.group('').resource('pods').check('list').allowed()";
  t.equal(await evaluate(source, authorizer), false, 'get allowed, so delete decides: not allowed');
  t.same(
    authorizer.asked.map((round) => round.map((q) => q.verb)),
    [['get', 'list'], ['delete']],
    'round 1 met get (pending, so the else branch: list); round 2 knew get and met delete',
  );
  const known = new FakeAuthorizer(ALLOW);
  known.known = () => ({ allowed: true }) as unknown as undefined;
  t.equal(await evaluate("authorizer.group('').resource('pods').check('get').allowed()", known), true);
  t.same(known.asked, [], 'a known answer (the cache) asks nothing');
});

t.test('a check nobody answers fails its expression; the failurePolicy decides, with kube-apiserver\'s words', async (t) => {
  const failing: AuthorizationSource = { known: () => undefined, ask: async (qs) => qs.map(() => ({ failed: 'SubjectAccessReview failed: 500 InternalError: etcd is down' })) };
  await t.rejects(evaluate("authorizer.group('').resource('pods').check('get').allowed()", failing), { message: /SubjectAccessReview failed: 500 InternalError: etcd is down/ });
  await t.rejects(evaluate("authorizer.group('').resource('pods').check('get').allowed()", undefined), { message: /nobody to ask whether alice may get pods \(authorizer checks are answered by kube-apiserver/ });
  // CEL's || absorbs the error when the other side decides, as cel-go's does.
  t.equal(await evaluate("true || authorizer.group('').resource('pods').check('get').allowed()", failing), true);

  const rule = (failurePolicy: string) => `webhooks:
  - name: delete-rights
    kind: cel
    failurePolicy: ${failurePolicy}
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('delete').allowed()"
        message: only those who may delete Deployments here may create Pods
      - expression: "has(object.metadata.labels.app)"
`;
  const request = admissionRequest(pod({ containers: [] }));
  const fail = await runReview(webhookFrom(rule('Fail'), { authorization: failing }), request, 1000);
  t.match(fail.verdict, { allowed: false, status: { code: 422, message: /^expression 'authorizer\.group.*' resulted in error: SubjectAccessReview failed: 500 InternalError: etcd is down$/ } });
  const ignore = await runReview(webhookFrom(rule('Ignore'), { authorization: failing }), request, 1000);
  t.equal(ignore.verdict.allowed, true, 'Ignore lets the erroring validation through; the other one holds');
  t.match(ignore.verdict.auditAnnotations, { 'failed-open': /SubjectAccessReview failed/ });
  const allowing = await runReview(webhookFrom(rule('Fail'), { authorization: allowMatch({ group: 'apps', resource: 'deployments', namespace: 'team-a', verb: 'delete' }) }), request, 1000);
  t.equal(allowing.verdict.allowed, true, 'allowed where the authorizer allows');
  const denying = await runReview(webhookFrom(rule('Fail'), { authorization: denyAll }), request, 1000);
  t.match(denying.verdict, { allowed: false, status: { code: 422, message: 'only those who may delete Deployments here may create Pods' } });
});

t.test('a review that ends first ends the wait: the check fails, never hangs', async (t) => {
  const never: AuthorizationSource = { known: () => undefined, ask: (_qs, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve([{ failed: 'the SubjectAccessReview did not end before the review did' }]))) };
  const controller = new AbortController();
  const compiled = compileExpression(env, "authorizer.group('').resource('pods').check('get').allowed()", 'any');
  if (!compiled.ok) throw new Error(compiled.problem);
  const pending = withAuthorizationAnswers(never, controller.signal, (authorize) => compiled.expression.evaluate({ authorizer: requestAuthorizer(endpointsRequest(), authorize), variables: {} }, new EvaluationBudget()));
  setTimeout(() => controller.abort(), 20);
  await t.rejects(Promise.resolve(pending), { message: /did not end before the review did/ });
});
