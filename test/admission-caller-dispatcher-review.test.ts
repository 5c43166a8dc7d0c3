// What a review of the double against kube-apiserver's dispatcher (apiserver's
// pkg/admission/plugin/webhook/mutating/dispatcher.go, generic/webhook.go, endpoints/handlers/
// create.go) found: the patched object is decoded into the typed schema, webhooks are matched on
// the object as the earlier patches left it, and the validating phase of a generateName create
// carries the generated name.
import t from 'tap';
import { createPodRequest, pod, register, startCallerRig, webhookEntry } from '../local-cluster/admission-caller/fixtures.js';
import { createWebhookAdmission } from '../local-cluster/admission-caller/write-admission.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { allow, jsonPatchResponse, type ReceivedReview } from '../local-cluster/fake-apiserver/webhook-server.js';

const { api, hook, caller } = await startCallerRig(t);

const at = (path: string) => ({ clientConfig: { service: { name: 'hook', namespace: 'webhooks', path }, caBundle: hook.caBundle } });
const pathOf = (r: ReceivedReview): string => r.path.split('?')[0]!;

t.beforeEach(() => {
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'] as const) {
    for (const object of api.store.list(resource)) api.store.delete(resource, undefined, object.metadata?.name ?? '');
  }
  hook.received.length = 0;
  hook.respond = allow;
});

t.test('a patched object is decoded into its type: unknown fields are dropped', async (t) => {
  await register(api, 'mutating', 'm', [webhookEntry('m.example.com', hook.caBundle, at('/mutate'))]);
  hook.respond = (r) =>
    jsonPatchResponse(r, [
      { op: 'add', path: '/metadata/labels/patched', value: 'yes' },
      { op: 'add', path: '/spec/containers/0/imagePullPolicyy', value: 'Always' },
      { op: 'add', path: '/spec/notAField', value: { nested: true } },
    ]);
  const result = await caller.admit(createPodRequest(pod('web')));
  t.ok(result.allowed);
  const object = result.allowed ? result.object : undefined;
  t.equal(object?.metadata?.labels?.patched, 'yes', 'a known field stays');
  const spec = object?.spec as Record<string, unknown> & { containers: Record<string, unknown>[] };
  t.notOk('notAField' in spec, 'an unknown field of the spec is gone');
  t.notOk('imagePullPolicyy' in spec.containers[0]!, 'a misspelt container field is gone');
});

t.test('a patched value of the wrong type is a 500 that failurePolicy Ignore does not cover', async (t) => {
  await register(api, 'mutating', 'm', [webhookEntry('m.example.com', hook.caBundle, { ...at('/mutate'), failurePolicy: 'Ignore' })]);
  hook.respond = (r) => jsonPatchResponse(r, [{ op: 'replace', path: '/spec/containers/0/image', value: 5 }]);
  const result = await caller.admit(createPodRequest(pod('web')));
  t.notOk(result.allowed, 'the write is refused even though the webhook fails open');
  t.match(result.allowed ? undefined : result.status, {
    code: 500,
    reason: 'InternalError',
    message: 'Internal error occurred: json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string',
  });
  hook.respond = (r) => jsonPatchResponse(r, [{ op: 'add', path: '/metadata/labels', value: { n: 1 } }]);
  const labels = await caller.admit(createPodRequest(pod('web')));
  t.match(labels.allowed ? undefined : labels.status, { code: 500, message: /cannot unmarshal number into Go struct field ObjectMeta\.metadata\.labels of type string/ });
});

t.test('mutating webhooks are matched on the object as the earlier patches left it; validating ones on the final object', async (t) => {
  const tierWeb = { objectSelector: { matchLabels: { tier: 'web' } } };
  await register(api, 'mutating', 'a-labeller', [webhookEntry('labeller.example.com', hook.caBundle, at('/label'))]);
  await register(api, 'mutating', 'b-selected', [webhookEntry('selected.example.com', hook.caBundle, { ...at('/selected'), ...tierWeb })]);
  await register(api, 'validating', 'v-selected', [webhookEntry('checked.example.com', hook.caBundle, { ...at('/checked'), ...tierWeb })]);
  hook.respond = (r) => (pathOf(r) === '/label' ? jsonPatchResponse(r, [{ op: 'add', path: '/metadata/labels/tier', value: 'web' }]) : allow(r));
  const result = await caller.admit(createPodRequest(pod('web')));
  t.ok(result.allowed);
  t.same(hook.received.map(pathOf), ['/label', '/selected', '/checked'], 'the label the first webhook added brought the object into both selectors');
});

t.test('matchConditions see the object as the earlier patches left it', async (t) => {
  await register(api, 'mutating', 'a-labeller', [webhookEntry('labeller.example.com', hook.caBundle, at('/label'))]);
  await register(api, 'mutating', 'b-conditional', [
    webhookEntry('conditional.example.com', hook.caBundle, { ...at('/conditional'), matchConditions: [{ name: 'tiered', expression: "has(object.metadata.labels) && 'tier' in object.metadata.labels" }] }),
  ]);
  hook.respond = (r) => (pathOf(r) === '/label' ? jsonPatchResponse(r, [{ op: 'add', path: '/metadata/labels/tier', value: 'web' }]) : allow(r));
  await caller.admit(createPodRequest(pod('web')));
  t.same(hook.received.map(pathOf), ['/label', '/conditional']);
});

t.test('the validating phase of a generateName create carries the generated name; the mutating phase has none', async (t) => {
  const admission = createWebhookAdmission({ store: api.store, resolveService: () => ({ host: '127.0.0.1', port: hook.port }) });
  api.setAdmission(admission.admission);
  t.teardown(() => admission.close());
  await register(api, 'mutating', 'm', [webhookEntry('m.example.com', hook.caBundle, at('/mutate'))]);
  await register(api, 'validating', 'v', [webhookEntry('v.example.com', hook.caBundle, at('/validate'))]);
  const created = await rawRequest(api, 'POST', '/api/v1/namespaces/team-a/pods', {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'web-' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  });
  t.equal(created.status, 201);
  const stored = (created.json as { metadata: { name: string } }).metadata.name;
  t.match(stored, /^web-[a-z0-9]{5}$/);
  const [mutating, validating] = hook.received;
  t.equal(pathOf(mutating!), '/mutate');
  t.notOk('name' in mutating!.review.request!, 'the mutating review has no name');
  t.equal(validating!.review.request!.name, stored, 'the validating review carries the generated name');
  t.equal((validating!.review.request!.object as { metadata: { name: string } }).metadata.name, stored);
});
