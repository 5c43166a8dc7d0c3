// The server's SubjectAccessReviews (src/kube/subject-access-reviews.ts) against the API double,
// whose SubjectAccessReview handler answers from the RBAC objects it stores, as kube-apiserver's
// RBAC authorizer does (the oracle here: Roles, ClusterRoles and bindings, not the code under
// test). Cache: TTL and size cap; concurrent reviews share a call; every call has a deadline and
// ends with the reviews waiting for it; a failed call is no answer (the expression fails).
import t from 'tap';
import { SubjectAccessReviews } from '../src/kube/subject-access-reviews.js';
import type { AskResult } from '../src/cel/authorization-answers.js';
import type { AuthorizationQuestion } from '../src/cel/library/authorizer.js';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { EVENT_MS } from './support/deadline.js';
import { startInProcessKube } from './support/kube/in-process-kube.js';

const NAMESPACE = 'kas';
const alice = { username: 'alice', groups: ['system:authenticated'] };
const bob = { username: 'bob', groups: ['release-managers', 'system:authenticated'] };
const rbac = 'rbac.authorization.k8s.io';

function seedRbac(store: { put(resource: string, object: KubeObject): KubeObject }): void {
  store.put('roles', { metadata: { name: 'deployment-admin', namespace: 'team-a' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'delete'] }] } as KubeObject);
  store.put('rolebindings', {
    metadata: { name: 'alice-deployments', namespace: 'team-a' },
    roleRef: { apiGroup: rbac, kind: 'Role', name: 'deployment-admin' },
    subjects: [{ apiGroup: rbac, kind: 'User', name: 'alice' }],
  } as KubeObject);
  store.put('clusterroles', { metadata: { name: 'scaler' }, rules: [{ apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['update'] }, { nonResourceURLs: ['/metrics', '/debug/*'], verbs: ['get'] }] } as KubeObject);
  store.put('clusterrolebindings', {
    metadata: { name: 'release-scalers' },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'scaler' },
    subjects: [{ apiGroup: rbac, kind: 'Group', name: 'release-managers' }, { kind: 'ServiceAccount', name: 'ci', namespace: 'tools' }],
  } as KubeObject);
}

/**
 * The tests about answers, the cache and shared calls: a call gets a busy machine's deadline, not
 * the server's 2 s (a cold first call, TLS and all, took longer in a CI run under Node 22). The
 * deadline itself has its own tests below.
 */
const NOT_ABOUT_DEADLINES = { callTimeoutMs: EVENT_MS };

const ask = async (reviews: SubjectAccessReviews, question: AuthorizationQuestion, signal = new AbortController().signal): Promise<AskResult> => (await reviews.ask([question], signal))[0]!;
const reviewCalls = (api: { requests: readonly { resource?: string }[] }) => api.requests.filter((r) => r.resource === 'subjectaccessreviews').length;

t.test('answers are RBAC\'s: bindings to users, groups and service accounts, subresources, namespaces, non-resource paths', async (t) => {
  const { api, kube } = await startInProcessKube(t, NAMESPACE);
  seedRbac(api.store);
  const reviews = new SubjectAccessReviews({ api: kube, ...NOT_ABOUT_DEADLINES });
  const cases: [string, AuthorizationQuestion, AskResult][] = [
    [
      'alice deletes deployments in team-a',
      { user: alice, verb: 'delete', group: 'apps', resource: 'deployments', namespace: 'team-a' },
      { allowed: true, reason: 'RBAC: allowed by RoleBinding "alice-deployments/team-a" of Role "deployment-admin" to User "alice"' },
    ],
    ['alice, another namespace: no opinion', { user: alice, verb: 'delete', group: 'apps', resource: 'deployments', namespace: 'team-b' }, { allowed: false }],
    ['alice, another verb', { user: alice, verb: 'create', group: 'apps', resource: 'deployments', namespace: 'team-a' }, { allowed: false }],
    [
      "bob through his group, a subresource",
      { user: bob, verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'team-b', name: 'web' },
      { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "release-scalers" of ClusterRole "scaler" to Group "release-managers"' },
    ],
    ['bob, the resource itself (not its subresource)', { user: bob, verb: 'update', group: 'apps', resource: 'deployments', namespace: 'team-b' }, { allowed: false }],
    [
      'a service account (authorizer.serviceAccount)',
      { user: { username: 'system:serviceaccount:tools:ci', groups: ['system:serviceaccounts', 'system:serviceaccounts:tools'] }, verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale' },
      { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "release-scalers" of ClusterRole "scaler" to ServiceAccount "ci/tools"' },
    ],
    ['bob, a path under a wildcard', { user: bob, verb: 'get', path: '/debug/pprof' }, { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "release-scalers" of ClusterRole "scaler" to Group "release-managers"' }],
    ['alice, the same path', { user: alice, verb: 'get', path: '/debug/pprof' }, { allowed: false }],
    ['system:masters may do anything', { user: { username: 'root', groups: ['system:masters'] }, verb: 'delete', group: '', resource: 'nodes' }, { allowed: true }],
  ];
  for (const [name, question, expected] of cases) t.same(await ask(reviews, question), expected, name);
  const sent = api.requests.filter((r) => r.resource === 'subjectaccessreviews');
  t.equal(sent.length, cases.length, 'one SubjectAccessReview per question');
  t.ok(sent.every((r) => r.verb === 'create' && r.path === '/apis/authorization.k8s.io/v1/subjectaccessreviews'));
});

t.test('answers are cached for their TTL, at most maxEntries of them; errors and failures never', async (t) => {
  const { api, kube } = await startInProcessKube(t, NAMESPACE);
  seedRbac(api.store);
  let now = 0;
  const reviews = new SubjectAccessReviews({ api: kube, ttlMs: 10_000, maxEntries: 2, now: () => now, ...NOT_ABOUT_DEADLINES });
  const q = (verb: string): AuthorizationQuestion => ({ user: alice, verb, group: 'apps', resource: 'deployments', namespace: 'team-a' });
  await ask(reviews, q('delete'));
  t.same(reviews.known(q('delete')), { allowed: true, reason: 'RBAC: allowed by RoleBinding "alice-deployments/team-a" of Role "deployment-admin" to User "alice"' }, 'cached');
  t.same(reviews.known({ ...q('delete'), user: { ...alice, groups: ['other'] } }), undefined, 'another user (other groups) is another question');
  now = 9_999;
  t.ok(reviews.known(q('delete')), 'still within the TTL');
  now = 10_000;
  t.equal(reviews.known(q('delete')), undefined, 'expired: a removed RoleBinding stops counting within the TTL');
  await ask(reviews, q('get'));
  await ask(reviews, q('delete'));
  await ask(reviews, q('create'));
  t.equal(reviews.known(q('get')), undefined, 'the oldest went when a third came');
  t.ok(reviews.known(q('delete')) && reviews.known(q('create')));

  const before = reviewCalls(api);
  api.faults.add({ resource: 'subjectaccessreviews', verb: 'create' }, { status: 500 }, { times: 1 });
  t.match(await ask(reviews, q('list')), { failed: /^SubjectAccessReview failed: 500 / });
  t.equal(reviews.known(q('list')), undefined, 'a failure is not cached');
  t.same(await ask(reviews, q('list')), { allowed: false }, 'asked again');
  t.equal(reviewCalls(api) - before, 2);
});

t.test('concurrent reviews asking the same question share one call', async (t) => {
  const { api, kube } = await startInProcessKube(t, NAMESPACE);
  seedRbac(api.store);
  const reviews = new SubjectAccessReviews({ api: kube, ...NOT_ABOUT_DEADLINES });
  api.faults.add({ resource: 'subjectaccessreviews' }, { latencyMs: 200 }, { times: 1 });
  const question: AuthorizationQuestion = { user: alice, verb: 'delete', group: 'apps', resource: 'deployments', namespace: 'team-a' };
  const answers = await Promise.all([1, 2, 3, 4].map(() => ask(reviews, question)));
  t.ok(answers.every((a) => 'allowed' in a && a.allowed));
  t.equal(reviewCalls(api), 1);
});

t.test('every call has a deadline', async (t) => {
  const { api, kube } = await startInProcessKube(t, NAMESPACE);
  api.faults.add({ resource: 'subjectaccessreviews' }, { hang: true });
  const reviews = new SubjectAccessReviews({ api: kube, callTimeoutMs: 300 });
  const started = performance.now();
  t.match(await ask(reviews, { user: alice, verb: 'get', group: '', resource: 'pods' }), { failed: /SubjectAccessReview failed/ });
  t.ok(performance.now() - started < 5_000, 'bounded by the call deadline (300 ms), with slack');
});

t.test('a call ends when the reviews waiting for it end: no answer, and the request is cancelled', async (t) => {
  const { api, kube } = await startInProcessKube(t, NAMESPACE);
  api.faults.add({ resource: 'subjectaccessreviews' }, { hang: true });
  const reviews = new SubjectAccessReviews({ api: kube, callTimeoutMs: 60_000 });
  const review = new AbortController();
  const pending = ask(reviews, { user: alice, verb: 'get', group: '', resource: 'pods' }, review.signal);
  const sent = await api.waitForRequest((r) => r.resource === 'subjectaccessreviews', { phase: 'started' });
  review.abort(new Error('the review timed out'));
  t.same(await pending, { failed: 'the SubjectAccessReview did not end before the review did' });
  await api.waitForRequest((r) => r.resource === 'subjectaccessreviews' && r.startedAt === sent.startedAt, { timeoutMs: 5_000 });
  t.pass('the call itself was cancelled (its connection closed), not left hanging for its 60 s deadline');
});

t.test('probe: whether this server may create SubjectAccessReviews', async (t) => {
  const { api, kube } = await startInProcessKube(t, NAMESPACE);
  const reviews = new SubjectAccessReviews({ api: kube, ...NOT_ABOUT_DEADLINES });
  t.equal(await reviews.probe(new AbortController().signal), 'ok', 'the administrator may');
  api.setRbac({ clusterRoles: [{ rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }] });
  t.equal(await reviews.probe(new AbortController().signal), 'forbidden', 'without the grant: 403');
  api.setRbac({ clusterRoles: [{ rules: [{ apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] }] }] });
  t.equal(await reviews.probe(new AbortController().signal), 'ok', 'with it');
});

t.test("the double validates a review as kube-apiserver does (ValidateSubjectAccessReviewSpec)", async (t) => {
  const { api } = await startInProcessKube(t, NAMESPACE);
  const reply = await api.request({ username: 'kubernetes-admin', groups: ['system:masters'] }, { method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: {} } });
  t.equal(reply.status, 422);
  t.match(reply.body, {
    message: 'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]',
  });
});
