// The double decides matchConditions with CEL as kube-apiserver does (local-cluster/CONTRACT.md 3.7).
import t from 'tap';
import { createPodRequest, pod, register, startCallerRig, webhookEntry } from '../local-cluster/admission-caller/fixtures.js';
import { allow, deny, jsonPatchResponse, type ReceivedReview } from '../local-cluster/fake-apiserver/webhook-server.js';

const { api, hook, caller } = await startCallerRig(t);

const hookNameOf = (r: ReceivedReview): string => r.path.split('?')[0]!.split('/').pop()!;
const entry = (name: string, overrides: Record<string, unknown> = {}) =>
  webhookEntry(name, hook.caBundle, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: `/admit/${name}` }, caBundle: hook.caBundle }, ...overrides });

t.beforeEach(() => {
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'] as const) {
    for (const object of api.store.list(resource)) api.store.delete(resource, undefined, object.metadata?.name ?? '');
  }
  hook.respond = allow;
  hook.received.length = 0;
});

t.test('all true: called; any false: skipped; conditions see object, request and integers as ints', async (t) => {
  await register(api, 'validating', 'v', [
    entry('team-a.example.com', {
      matchConditions: [
        { name: 'team-a', expression: "request.namespace == 'team-a'" },
        { name: 'one-container', expression: 'size(object.spec.containers) + 0 == 1' },
      ],
    }),
    entry('never.example.com', { matchConditions: [{ name: 'not-nginx', expression: "object.spec.containers.all(c, c.image != 'nginx')" }] }),
  ]);
  hook.respond = (r) => (hookNameOf(r) === 'team-a.example.com' ? deny(r, { message: 'seen', code: 403 }) : allow(r));
  const result = await caller.admit(createPodRequest(pod('web')));
  t.same(hook.received.map(hookNameOf), ['team-a.example.com']);
  t.match(result, { allowed: false, status: { message: 'admission webhook "team-a.example.com" denied the request: seen' } });
});

t.test('a condition that errors: 403 under Fail without calling; skipped under Ignore', async (t) => {
  const failing = [{ name: 'team-label', expression: "object.metadata.labels.team == 'a'" }];
  await register(api, 'validating', 'v', [entry('strict.example.com', { matchConditions: failing })]);
  const refused = await caller.admit(createPodRequest(pod('web')));
  t.match(refused, { allowed: false, status: { code: 403, reason: 'Forbidden', message: /strict.example.com.*team-label/ } });
  t.same(hook.received, [], 'the webhook is not called');

  api.store.delete('validatingwebhookconfigurations', undefined, 'v');
  await register(api, 'validating', 'v', [entry('lenient.example.com', { failurePolicy: 'Ignore', matchConditions: failing })]);
  t.match(await caller.admit(createPodRequest(pod('web'))), { allowed: true });
  t.same(hook.received, []);
  // A false elsewhere wins over the error: skipped even under Fail.
  api.store.delete('validatingwebhookconfigurations', undefined, 'v');
  await register(api, 'validating', 'v', [entry('strict.example.com', { matchConditions: [...failing, { name: 'never', expression: 'false' }] })]);
  t.match(await caller.admit(createPodRequest(pod('web'))), { allowed: true });
});

t.test('validating conditions see the object as mutated', async (t) => {
  await register(api, 'mutating', 'm', [entry('label.example.com')]);
  await register(api, 'validating', 'v', [entry('labelled.example.com', { matchConditions: [{ name: 'labelled', expression: "has(object.metadata.labels.stamped)" }] })]);
  hook.respond = (r) => (hookNameOf(r) === 'label.example.com' ? jsonPatchResponse(r, [{ op: 'add', path: '/metadata/labels/stamped', value: 'yes' }]) : allow(r));
  await caller.admit(createPodRequest(pod('web')));
  t.same(hook.received.map(hookNameOf), ['label.example.com', 'labelled.example.com']);
});
