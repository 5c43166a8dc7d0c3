// Admission on every write through the double's REST API, as kube-apiserver runs it: mutating
// webhooks on the decoded object (their patch stored), then validating ones on the object with
// its system fields; denials, warnings (Warning headers) and failed calls answered to the client
// as kube-apiserver answers them; webhooks reached through the Service model (kube-proxy), with
// caBundle, timeout, failurePolicy and selectors. kubectl shows what a user sees.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { register, webhookEntry } from '../local-cluster/admission-caller/fixtures.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { allow, deny, jsonPatchResponse, startTestWebhookServer, type ReceivedReview } from '../local-cluster/fake-apiserver/webhook-server.js';
import { startAdmissionWorld } from './support/kube/admission-world.js';
import { describeResult, kubectlMissing, runShell } from './support/tools/kubectl.js';

const world = await startAdmissionWorld(t, ['webhooks', 'team-a', 'quiet'], 'admission-writes-');
const { api, hook, dir } = world;
api.store.createNamespace('quiet', { quiet: 'true' });

/** The webhook's Service, and the EndpointSlice an endpoints controller would write for the test server. */
function serve(service: string, ready: boolean, terminating?: { serving: boolean }): void {
  api.store.put('services', { metadata: { name: service, namespace: 'webhooks' }, spec: { clusterIP: '10.96.0.10', ports: [{ name: 'https', port: 443, targetPort: 9443, protocol: 'TCP' }], selector: { app: service } } });
  api.store.put('endpointslices', {
    metadata: { name: `${service}-abcde`, namespace: 'webhooks', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.0.0.1'], conditions: terminating ? { ready: false, serving: terminating.serving, terminating: true } : { ready } }],
    ports: [{ name: 'https', port: hook.port, protocol: 'TCP' }],
  });
}

/** Waits for kube-proxy's next sync (here immediate, still asynchronous). */
const synced = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));
const pod = (name: string, labels: Record<string, string> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
});
const createPod = (namespace: string, body: Record<string, unknown>, query = ''): ReturnType<typeof rawRequest> =>
  rawRequest(api, 'POST', `/api/v1/namespaces/${namespace}/pods${query}`, { body });
const entry = (name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> =>
  webhookEntry(name, hook.caBundle, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/admit', port: 443 }, caBundle: hook.caBundle }, ...overrides });
const clear = (): void => {
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    for (const object of api.store.list(resource)) api.store.delete(resource, undefined, object.metadata?.name ?? '');
  }
  hook.received.length = 0;
};
const path = (received: ReceivedReview): string => received.path.split('?')[0] ?? '';

serve('hook', true);
await synced();

t.test('a mutating patch is stored; validating webhooks then see the object with its system fields', async (t) => {
  clear();
  await register(api, 'mutating', 'm', [entry('label.example.com', { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/mutate', port: 443 }, caBundle: hook.caBundle } })]);
  await register(api, 'validating', 'v', [entry('check.example.com')]);
  world.respond = (received) => (path(received) === '/mutate' ? jsonPatchResponse(received, [{ op: 'add', path: '/metadata/labels/injected', value: 'yes' }]) : allow(received));
  const created = await createPod('team-a', pod('web'));
  t.equal(created.status, 201);
  t.equal((created.json as { metadata: { labels: Record<string, string> } }).metadata.labels['injected'], 'yes', 'the patch is in the stored object');
  t.equal(api.store.get('pods', 'team-a', 'web')?.metadata?.labels?.['injected'], 'yes');
  const [mutating, validating] = hook.received;
  t.equal(path(mutating!), '/mutate');
  t.same((mutating!.review.request?.object as { metadata: Record<string, unknown> }).metadata.creationTimestamp, null, 'mutating webhooks see no system fields');
  t.equal((mutating!.review.request?.userInfo as { username: string }).username, 'kubernetes-admin', 'the authenticated user');
  const validated = validating!.review.request?.object as { metadata: { uid: string; labels: Record<string, string> } };
  t.equal(validated.metadata.labels['injected'], 'yes', 'validating webhooks see the mutated object');
  t.equal(validated.metadata.uid, (created.json as { metadata: { uid: string } }).metadata.uid, 'with the uid that is stored');
  t.equal(mutating!.servername, 'hook.webhooks.svc', 'called as <service>.<namespace>.svc through the Service');
  t.equal(mutating!.review.request?.operation, 'CREATE');
  const updated = await rawRequest(api, 'PATCH', '/api/v1/namespaces/team-a/pods/web', { body: { metadata: { labels: { tier: 'front' } } }, contentType: 'application/merge-patch+json' });
  t.equal(updated.status, 200);
  const update = hook.received.at(-1)!;
  t.equal(update.review.request?.operation, 'UPDATE', 'a PATCH is an UPDATE');
  t.equal((update.review.request?.oldObject as { metadata: { labels: Record<string, string> } }).metadata.labels['tier'], undefined, 'with the stored object as oldObject');
});

t.test('a denial: the webhook\'s code and message, as kube-apiserver wraps them; nothing stored', async (t) => {
  clear();
  await register(api, 'validating', 'v', [entry('deny.example.com')]);
  world.respond = (received) => deny(received, { code: 403, message: 'no pods on Fridays' }, { warnings: ['it is Friday'] });
  const denied = await createPod('team-a', pod('friday'));
  t.equal(denied.status, 403);
  t.same(denied.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'admission webhook "deny.example.com" denied the request: no pods on Fridays', code: 403 });
  t.same(denied.headers.warning, '299 - "it is Friday"', 'warnings travel as Warning headers, denied or not');
  t.notOk(api.store.get('pods', 'team-a', 'friday'));
  world.respond = (received) => deny(received, undefined);
  const bare = await createPod('team-a', pod('friday'));
  t.equal(bare.status, 400, 'no status: code 400');
  t.equal((bare.json as { message: string }).message, 'admission webhook "deny.example.com" denied the request without explanation');
});

t.test('DELETE is admitted too, with the stored object as oldObject', async (t) => {
  clear();
  await register(api, 'validating', 'v', [entry('keep.example.com', { rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] })]);
  world.respond = (received) => deny(received, { code: 403, message: 'keep it' });
  const refused = await rawRequest(api, 'DELETE', '/api/v1/namespaces/team-a/pods/web');
  t.equal(refused.status, 403);
  t.ok(api.store.get('pods', 'team-a', 'web'), 'still there');
  t.equal((hook.received[0]?.review.request?.oldObject as { metadata: { name: string } }).metadata.name, 'web');
  t.equal(hook.received[0]?.review.request?.object, null);
});

t.test('failed calls follow failurePolicy, with kube-apiserver\'s texts', async (t) => {
  clear();
  await register(api, 'validating', 'v', [
    entry('missing.example.com', { clientConfig: { service: { name: 'gone', namespace: 'webhooks', path: '/admit', port: 443 }, caBundle: hook.caBundle }, timeoutSeconds: 5 }),
  ]);
  const missing = await createPod('team-a', pod('a'));
  t.equal(missing.status, 500);
  t.equal((missing.json as { message: string }).message, 'Internal error occurred: failed calling webhook "missing.example.com": failed to call webhook: Post "https://gone.webhooks.svc:443/admit?timeout=5s": service "gone" not found');

  clear();
  serve('hook', false);
  await synced();
  await register(api, 'validating', 'v', [entry('noendpoints.example.com', { timeoutSeconds: 5 })]);
  const refused = await createPod('team-a', pod('a'));
  t.equal((refused.json as { message: string }).message, 'Internal error occurred: failed calling webhook "noendpoints.example.com": failed to call webhook: Post "https://hook.webhooks.svc:443/admit?timeout=5s": dial tcp 10.96.0.10:443: connect: connection refused', 'no ready endpoint: refused, as kube-proxy rejects');
  // Every endpoint terminating (a scale to zero): kube-proxy routes to those still serving (KEP-1669).
  serve('hook', false, { serving: true });
  await synced();
  const routed = await createPod('team-a', pod('a'));
  t.notMatch((routed.json as { message?: string }).message ?? '', /failed calling webhook/, `a terminating endpoint that still serves is used when no endpoint is ready (HTTP ${routed.status}: the webhook's answer)`);
  serve('hook', false, { serving: false });
  await synced();
  t.match(((await createPod('team-a', pod('a'))).json as { message: string }).message, /connect: connection refused$/, 'one that no longer serves is not');
  serve('hook', true);
  await synced();

  clear();
  const otherCa = await startTestWebhookServer();
  t.teardown(() => otherCa.close());
  await register(api, 'validating', 'v', [entry('wrongca.example.com', { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/admit', port: 443 }, caBundle: otherCa.caBundle }, timeoutSeconds: 5 })]);
  const untrusted = await createPod('team-a', pod('a'));
  t.match((untrusted.json as { message: string }).message, /failed to call webhook: Post "https:\/\/hook\.webhooks\.svc:443\/admit\?timeout=5s": tls: failed to verify certificate: x509: certificate signed by unknown authority$/, 'only the caBundle is trusted');

  clear();
  await register(api, 'validating', 'v', [entry('slow.example.com', { timeoutSeconds: 1, failurePolicy: 'Ignore' })]);
  world.respond = (received) => ({ delayMs: 3000, then: allow(received) });
  const ignored = await createPod('team-a', pod('slow'));
  t.equal(ignored.status, 201, 'Ignore: the request goes through when the call times out');
  world.respond = allow;
});

t.test('selectors: namespaceSelector and objectSelector decide who is called', async (t) => {
  clear();
  await register(api, 'validating', 'v', [
    entry('loud.example.com', { namespaceSelector: { matchExpressions: [{ key: 'quiet', operator: 'DoesNotExist' }] }, objectSelector: { matchLabels: { checked: 'yes' } } }),
  ]);
  world.respond = (received) => deny(received, { code: 403, message: 'checked' });
  t.equal((await createPod('quiet', pod('q', { checked: 'yes' }))).status, 201, 'the namespace is excluded');
  t.equal((await createPod('team-a', pod('u'))).status, 201, 'the object does not opt in');
  t.equal((await createPod('team-a', pod('c', { checked: 'yes' }))).status, 403);
  t.equal(hook.received.length, 1);
});

t.test('dry run: webhooks are called with dryRun true, nothing is stored', async (t) => {
  clear();
  await register(api, 'validating', 'v', [entry('dry.example.com')]);
  world.respond = allow;
  const dry = await createPod('team-a', pod('dry'), '?dryRun=All');
  t.equal(dry.status, 201);
  t.equal(hook.received[0]?.review.request?.dryRun, true);
  t.notOk(api.store.get('pods', 'team-a', 'dry'));
});

t.test('kubectl prints the denial and the warnings as against a real cluster', async (t) => {
  const missing = kubectlMissing();
  if (missing) return t.fail(missing);
  clear();
  await register(api, 'validating', 'v', [entry('deny.example.com')]);
  world.respond = (received) =>
    (received.review.request?.object as { metadata: { labels?: Record<string, string> } }).metadata.labels?.['privileged']
      ? deny(received, { code: 403, reason: 'Forbidden', message: 'privileged containers are not allowed' })
      : allow(received, { warnings: ['no app label (pods need one…)'] });
  const env = world.kubectlEnv;
  const file = join(dir, 'pods.yaml');
  await writeFile(file, stringify({ ...pod('kube-pod'), metadata: { name: 'kube-pod', namespace: 'team-a' } }));
  const warned = await runShell(`kubectl apply -f ${file}`, { cwd: dir, env, timeoutMs: 60_000 });
  t.equal(warned.code, 0, describeResult(warned));
  t.equal(warned.stderr, 'Warning: no app label (pods need one…)\n', 'UTF-8 in a warning reaches kubectl as UTF-8 (the server\'s truncation mark is one)');
  t.equal(warned.stdout, 'pod/kube-pod created\n');
  await writeFile(file, stringify({ ...pod('bad-pod'), metadata: { name: 'bad-pod', namespace: 'team-a', labels: { privileged: 'set' } } }));
  const denied = await runShell(`kubectl apply -f ${file}`, { cwd: dir, env, timeoutMs: 60_000 });
  t.equal(denied.code, 1);
  t.equal(denied.stderr, `Error from server (Forbidden): error when creating "${file}": admission webhook "deny.example.com" denied the request: privileged containers are not allowed\n`);
});
