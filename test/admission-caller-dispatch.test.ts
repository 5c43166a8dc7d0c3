// Which webhooks are called, in what order, in parallel or not, and how failurePolicy and timeouts decide.
import t from 'tap';
import { createPodRequest, pod, register, startCallerRig, webhookEntry } from '../local-cluster/admission-caller/fixtures.js';
import { allow, deny, jsonPatchResponse, startTestWebhookServer, type ReceivedReview } from '../local-cluster/fake-apiserver/webhook-server.js';
import { createAdmissionCaller } from '../local-cluster/admission-caller/index.js';

const { api, hook, caller } = await startCallerRig(t);
api.store.createNamespace('team-b', { env: 'prod' });

function clearConfigurations(): void {
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'] as const) {
    for (const object of api.store.list(resource)) api.store.delete(resource, undefined, object.metadata?.name ?? '');
  }
  hook.respond = allow;
}

/** The webhook a request reached, from the path `/admit/<name>`. */
const hookNameOf = (r: ReceivedReview): string => r.path.split('?')[0]!.split('/').pop()!;
const entry = (name: string, overrides: Record<string, unknown> = {}) =>
  webhookEntry(name, hook.caBundle, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: `/admit/${name}` }, caBundle: hook.caBundle }, ...overrides });

t.beforeEach(() => {
  clearConfigurations();
  hook.received.length = 0;
});

t.test('mutating webhooks run one by one, configurations by name, webhooks in listed order', async (t) => {
  await register(api, 'mutating', 'b-config', [entry('b1.example.com'), entry('b2.example.com')]);
  await register(api, 'mutating', 'a-config', [entry('a2.example.com'), entry('a1.example.com')]);
  const order: string[] = [];
  hook.respond = (r) => {
    const name = hookNameOf(r);
    order.push(name);
    const labels = ((r.review.request?.object as { metadata: { labels?: Record<string, string> } }).metadata.labels) ?? {};
    // Each webhook sees the previous one's patch and appends its own.
    return jsonPatchResponse(r, [{ op: 'add', path: '/metadata/labels/chain', value: `${labels.chain ?? ''}>${name}` }]);
  };
  const result = await caller.admit(createPodRequest(pod('web')));
  t.same(order, ['a2.example.com', 'a1.example.com', 'b1.example.com', 'b2.example.com']);
  t.equal(result.allowed && result.object?.metadata?.labels?.chain, '>a2.example.com>a1.example.com>b1.example.com>b2.example.com');
  const calls = caller.calls.filter((c) => c.phase === 'mutating').slice(-4);
  for (let i = 1; i < calls.length; i++) t.ok(calls[i]!.startedAt >= calls[i - 1]!.endedAt, 'no overlap between mutating calls');
});

t.test('validating webhooks run in parallel; the first error to arrive wins', async (t) => {
  await register(api, 'validating', 'v', [entry('slow.example.com'), entry('fast.example.com'), entry('ok.example.com')]);
  let arrived = 0;
  let releaseAll!: () => void;
  const allArrived = new Promise<void>((resolve) => (releaseAll = resolve));
  hook.respond = (r) => {
    arrived += 1;
    if (arrived === 3) releaseAll();
    const name = hookNameOf(r);
    if (name === 'slow.example.com') return { delayMs: 300, then: deny(r, { message: 'slow says no' }) };
    if (name === 'fast.example.com') return { delayMs: 50, then: deny(r, { message: 'fast says no' }) };
    return allow(r, { warnings: ['from ok'] });
  };
  const result = await caller.admit(createPodRequest(pod('web')));
  await allArrived;
  t.equal(arrived, 3, 'every validating webhook was called');
  t.equal(result.allowed === false && result.status.message, 'admission webhook "fast.example.com" denied the request: fast says no');
  t.same(result.warnings, ['from ok'], 'warnings of all webhooks are kept');
  const calls = caller.calls.filter((c) => c.phase === 'validating').slice(-3);
  const latestStart = Math.max(...calls.map((c) => c.startedAt));
  const earliestEnd = Math.min(...calls.map((c) => c.endedAt));
  t.ok(latestStart < earliestEnd, 'all three calls were in flight at the same time');
});

t.test('failurePolicy Fail rejects with 500, Ignore skips and annotates (mutating and validating)', async (t) => {
  const unreachable = (name: string, policy: string) =>
    entry(name, { failurePolicy: policy, clientConfig: { service: { name: 'gone', namespace: 'webhooks', path: '/x' }, caBundle: hook.caBundle } });
  const closedPort = await (async () => {
    const probe = await startTestWebhookServer({ ca: undefined });
    const port = probe.port;
    await probe.close();
    return port;
  })();
  const gone = createAdmissionCaller({ api, resolveService: (_ns, name) => ({ host: '127.0.0.1', port: name === 'gone' ? closedPort : hook.port }) });
  t.teardown(() => gone.close());

  await register(api, 'mutating', 'm', [unreachable('m-ignore.example.com', 'Ignore'), entry('m-after.example.com')]);
  await register(api, 'validating', 'v', [unreachable('v-ignore.example.com', 'Ignore')]);
  const ignored = await gone.admit(createPodRequest(pod('web')));
  t.equal(ignored.allowed, true, 'Ignore lets the request through');
  t.same(hook.received.map(hookNameOf), ['m-after.example.com'], 'the chain continues after a failed-open webhook');
  t.equal(ignored.auditAnnotations['failed-open.mutation.webhook.admission.k8s.io/round_0_index_0'], 'm-ignore.example.com');
  t.equal(ignored.auditAnnotations['failed-open.validating.webhook.admission.k8s.io/round_0_index_0'], 'v-ignore.example.com');

  clearConfigurations();
  await register(api, 'validating', 'v', [unreachable('v-fail.example.com', 'Fail')]);
  const failed = await gone.admit(createPodRequest(pod('web')));
  const message = `failed calling webhook "v-fail.example.com": failed to call webhook: Post "https://gone.webhooks.svc:443/x?timeout=10s": dial tcp 127.0.0.1:${closedPort}: connect: connection refused`;
  t.same(failed.allowed === false && failed.status, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: `Internal error occurred: ${message}`, reason: 'InternalError', details: { causes: [{ message }] }, code: 500,
  });

  clearConfigurations();
  await register(api, 'mutating', 'm', [unreachable('m-fail.example.com', 'Fail')]);
  const failedMutating = await gone.admit(createPodRequest(pod('web')));
  t.equal(failedMutating.allowed === false && failedMutating.status.code, 500);
});

t.test('a webhook slower than timeoutSeconds is a call error: context deadline exceeded', async (t) => {
  await register(api, 'validating', 'v', [entry('slow.example.com', { timeoutSeconds: 1 })]);
  hook.respond = () => ({ hang: true });
  const started = performance.now();
  const result = await caller.admit(createPodRequest(pod('web')));
  const elapsed = performance.now() - started;
  t.equal(hook.received.at(-1)!.path, '/admit/slow.example.com?timeout=1s');
  t.equal(result.allowed === false && result.status.message, 'Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "https://hook.webhooks.svc:443/admit/slow.example.com?timeout=1s": context deadline exceeded');
  t.ok(elapsed >= 900 && elapsed < 5000, `gave up after about a second (${Math.round(elapsed)} ms)`);
});

t.test('?timeout= is what is left of the user request, rounded up', async (t) => {
  await register(api, 'validating', 'v', [entry('v.example.com', { timeoutSeconds: 30 })]);
  await caller.admit(createPodRequest(pod('web'), { requestTimeoutMs: 4200 }));
  t.equal(hook.received.at(-1)!.path, '/admit/v.example.com?timeout=5s');
});

t.test('the parent deadline expired under Ignore: 504', async (t) => {
  await register(api, 'mutating', 'm', [entry('m.example.com', { failurePolicy: 'Ignore', timeoutSeconds: 5 })]);
  hook.respond = () => ({ hang: true });
  const result = await caller.admit(createPodRequest(pod('web'), { requestTimeoutMs: 300 }));
  t.same(result.allowed === false && result.status, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Timeout: request did not complete within requested timeout', reason: 'Timeout', details: {}, code: 504 });
});

t.test('selection by rules, scope, namespaceSelector, objectSelector', async (t) => {
  await register(api, 'validating', 'v', [
    entry('updates-only.example.com', { rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }),
    entry('deployments.example.com', { rules: [{ operations: ['*'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] }),
    entry('status-sub.example.com', { rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'] }] }),
    entry('cluster-scope.example.com', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Cluster' }] }),
    entry('not-team-a.example.com', { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['team-a'] }] } }),
    entry('prod.example.com', { namespaceSelector: { matchLabels: { env: 'prod' } } }),
    entry('labelled.example.com', { objectSelector: { matchLabels: { check: 'yes' } } }),
    entry('all-pods.example.com'),
  ]);
  const calledFor = async (request: ReturnType<typeof createPodRequest>): Promise<string[]> => {
    hook.received.length = 0;
    const result = await caller.admit(request);
    t.equal(result.allowed, true);
    return hook.received.map(hookNameOf).sort();
  };
  t.same(await calledFor(createPodRequest(pod('web', 'team-a'))), ['all-pods.example.com']);
  t.same(await calledFor(createPodRequest(pod('web', 'team-b'))), ['all-pods.example.com', 'not-team-a.example.com', 'prod.example.com']);
  t.same(await calledFor(createPodRequest(pod('web', 'team-a', { check: 'yes' }))), ['all-pods.example.com', 'labelled.example.com']);
  const old = pod('web', 'team-a', { check: 'yes' });
  t.same(
    await calledFor({ ...createPodRequest(pod('web', 'team-a')), operation: 'UPDATE', oldObject: old }),
    ['all-pods.example.com', 'labelled.example.com', 'updates-only.example.com'],
    'objectSelector matches the old object too',
  );
  t.same(await calledFor({ ...createPodRequest(pod('web', 'team-a')), operation: 'UPDATE', subResource: 'status', oldObject: pod('web') }), ['status-sub.example.com'], 'pods does not match pods/status');
  t.same(
    await calledFor({ operation: 'CREATE', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'new-ns', labels: { env: 'prod' } } }, kind: { group: '', version: 'v1', kind: 'Namespace' }, resource: { group: '', version: 'v1', resource: 'namespaces' } }),
    ['cluster-scope.example.com'],
    'a Namespace is cluster-scoped',
  );
  hook.received.length = 0;
  const missing = await caller.admit(createPodRequest(pod('web', 'nowhere')));
  t.same(missing.allowed === false && missing.status, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'namespaces "nowhere" not found', reason: 'NotFound', details: { name: 'nowhere', kind: 'namespaces' }, code: 404,
  }, 'a namespaceSelector on a missing namespace is a 404');
});

t.test('webhook configurations themselves are never intercepted', async (t) => {
  await register(api, 'validating', 'v', [entry('everything.example.com', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] })]);
  hook.respond = (r) => deny(r, { message: 'no' });
  const result = await caller.admit({
    operation: 'DELETE',
    oldObject: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'v' } },
    kind: { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingWebhookConfiguration' },
    resource: { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' },
  });
  t.equal(result.allowed, true);
  t.equal(hook.received.length, 0);
});

t.test('reinvocationPolicy IfNeeded: called again once a later webhook changed the object', async (t) => {
  await register(api, 'mutating', 'a', [entry('first.example.com', { reinvocationPolicy: 'IfNeeded' })]);
  await register(api, 'mutating', 'b', [entry('second.example.com')]);
  hook.respond = (r) =>
    hookNameOf(r) === 'second.example.com' ? jsonPatchResponse(r, [{ op: 'add', path: '/metadata/labels/second', value: 'x' }]) : allow(r);
  const result = await caller.admit(createPodRequest(pod('web')));
  t.same(hook.received.map(hookNameOf), ['first.example.com', 'second.example.com', 'first.example.com']);
  t.ok(result.auditAnnotations['mutation.webhook.admission.k8s.io/round_1_index_0']);

  clearConfigurations();
  hook.received.length = 0;
  await register(api, 'mutating', 'a', [entry('self.example.com', { reinvocationPolicy: 'IfNeeded' })]);
  hook.respond = (r) => jsonPatchResponse(r, [{ op: 'add', path: '/metadata/labels/self', value: 'x' }]);
  await caller.admit(createPodRequest(pod('web')));
  t.same(hook.received.map(hookNameOf), ['self.example.com'], 'its own change does not reinvoke a webhook');
});

t.test('dryRun against sideEffects Unknown is 400 without calling', async (t) => {
  // Leftover v1beta1 objects can carry Unknown: seed it directly, as validation would refuse it.
  api.store.put('validatingwebhookconfigurations', {
    metadata: { name: 'legacy' },
    webhooks: [{ ...entry('legacy.example.com'), sideEffects: 'Unknown', failurePolicy: 'Fail', timeoutSeconds: 10 }],
  });
  const result = await caller.admit(createPodRequest(pod('web'), { dryRun: true }));
  t.same(result.allowed === false && result.status, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'admission webhook "legacy.example.com" does not support dry run', reason: 'BadRequest', code: 400 });
  t.equal(hook.received.length, 0);
  api.store.delete('validatingwebhookconfigurations', undefined, 'legacy');
  await register(api, 'validating', 'v', [entry('v.example.com', { sideEffects: 'NoneOnDryRun' })]);
  const ok = await caller.admit(createPodRequest(pod('web'), { dryRun: true }));
  t.equal(ok.allowed, true);
  t.equal(hook.received.at(-1)!.review.request?.dryRun, true);
});
