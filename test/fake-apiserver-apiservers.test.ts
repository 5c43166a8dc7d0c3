// Several kube-apiservers over one store (local-cluster/CONTRACT.md 6): each reads webhook configurations and
// namespaces from its own informer cache, which a store change reaches after that
// kube-apiserver's lag; each keeps its own webhook connection pools; a restart of one cuts its
// connections and watches only. The oracle is the test webhook server: what it was really sent.
import { Agent, request } from 'node:https';
import t, { type Test } from 'tap';
import { createPodRequest, pod, register, webhookEntry } from '../local-cluster/admission-caller/fixtures.js';
import { createAdmissionCaller } from '../local-cluster/admission-caller/index.js';
import { ADMIN_USER, createCertificateAuthority, startFakeApiServer, type FakeApiServer, type FakeApiServerOptions, type KubeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { allow, deny, startTestWebhookServer, type TestWebhookServer } from '../local-cluster/fake-apiserver/webhook-server.js';
import { createWebhookAdmission } from '../local-cluster/admission-caller/write-admission.js';
import { sleep } from '../local-cluster/util/waits.js';

const LAG_MS = 1500;

async function rig(t: Test, apiservers: FakeApiServerOptions['apiservers']): Promise<{ api: FakeApiServer; hook: TestWebhookServer; caller: ReturnType<typeof createAdmissionCaller> }> {
  const api = await startFakeApiServer({ namespaces: ['team-a', 'webhooks'], apiservers });
  const hook = await startTestWebhookServer({ respond: allow });
  const caller = createAdmissionCaller({ api, resolveService: () => ({ host: '127.0.0.1', port: hook.port }) });
  t.teardown(async () => {
    await caller.close();
    await hook.close();
    await api.close();
  });
  return { api, hook, caller };
}

const entry = (hook: TestWebhookServer, path = '/admit', caBundle = hook.caBundle, overrides: Record<string, unknown> = {}) =>
  webhookEntry('check.example.com', caBundle, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path }, caBundle }, ...overrides });

/** Waits (bounded) until `apiserver`'s cache has caught up with the store. */
async function caughtUp(apiserver: KubeApiServer, timeoutMs = LAG_MS * 4): Promise<number> {
  const started = performance.now();
  while (apiserver.backlog > 0) {
    if (performance.now() - started > timeoutMs) throw new Error(`${apiserver.name} still ${apiserver.backlog} events behind after ${timeoutMs} ms`);
    await sleep(20);
  }
  return performance.now() - started;
}

const pathsOf = (hook: TestWebhookServer): string[] => hook.received.map((r) => r.path.split('?')[0]!);

t.test('the default is one kube-apiserver with no lag: a configuration is called as soon as it is stored', async (t) => {
  const { api, hook, caller } = await rig(t, undefined);
  t.equal(api.apiservers.length, 1);
  t.equal(api.apiservers[0]!.lagMs, 0);
  await register(api, 'validating', 'v', [entry(hook)]);
  await caller.admit(createPodRequest(pod('web')));
  t.same(pathsOf(hook), ['/admit']);
});

t.test('client connections are spread over the kube-apiservers; a connection stays with the one it reached', async (t) => {
  const { api } = await rig(t, 3);
  for (let i = 0; i < 3; i++) t.equal((await rawRequest(api, 'GET', '/api/v1/namespaces/team-a')).status, 200);
  const served = api.requests.filter((r) => r.path === '/api/v1/namespaces/team-a').map((r) => r.apiserver);
  t.same([...served].sort(), ['kube-apiserver-0', 'kube-apiserver-1', 'kube-apiserver-2'], 'three new connections, three kube-apiservers');

  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: api.caPem });
  t.teardown(() => agent.destroy());
  const get = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request(new URL('/api/v1/namespaces/default', api.url), { agent, headers: { Authorization: `Bearer ${api.token}` } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  for (let i = 0; i < 4; i++) t.equal(await get(), 200);
  const kept = api.requests.filter((r) => r.path === '/api/v1/namespaces/default').map((r) => r.apiserver);
  t.equal(new Set(kept).size, 1, `four requests on one kept-alive connection, one kube-apiserver (${kept.join(', ')})`);
});

t.test('a lagging kube-apiserver still calls a deleted configuration for its lag; the others stop at once', async (t) => {
  const { api, hook, caller } = await rig(t, [{}, { lagMs: LAG_MS }]);
  await register(api, 'validating', 'v', [entry(hook)]);
  await caughtUp(api.apiservers[1]!);
  const deleted = await rawRequest(api, 'DELETE', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v');
  t.equal(deleted.status, 200);
  const deletedAt = performance.now();
  hook.received.length = 0;

  await caller.admit(createPodRequest(pod('web'), { apiserver: 0 }));
  t.same(pathsOf(hook), [], 'kube-apiserver-0 knows the configuration is gone');
  await caller.admit(createPodRequest(pod('web'), { apiserver: 1 }));
  t.same(pathsOf(hook), ['/admit'], 'kube-apiserver-1 really called the deleted configuration');
  const lagging = caller.calls.filter((c) => c.apiserver === 'kube-apiserver-1' && c.startedAt > deletedAt);
  t.equal(lagging.length, 1);
  t.equal(lagging[0]!.outcome, 'allowed');

  // Through the double's front too: a write served by the lagging kube-apiserver runs its admission.
  const admission = createWebhookAdmission({ store: api.store, resolveService: () => ({ host: '127.0.0.1', port: hook.port }) });
  t.teardown(() => admission.close());
  api.setAdmission(admission.admission);
  const write = await api.request(ADMIN_USER, { method: 'POST', path: '/api/v1/namespaces/team-a/pods?dryRun=All', body: pod('web') }, 1);
  t.equal(write.status, 201);
  t.equal(hook.received.length, 2, 'the dry-run create through kube-apiserver-1 called the deleted configuration');
  t.match(admission.calls, [{ apiserver: 'kube-apiserver-1', configuration: 'v', outcome: 'allowed' }]);

  const waited = await caughtUp(api.apiservers[1]!);
  const sinceDelete = performance.now() - deletedAt;
  t.ok(sinceDelete >= LAG_MS - 50, `the deletion reached kube-apiserver-1 ${Math.round(sinceDelete)} ms after it landed (waited ${Math.round(waited)} ms here)`);
  hook.received.length = 0;
  await caller.admit(createPodRequest(pod('web'), { apiserver: 1 }));
  t.same(pathsOf(hook), [], 'after its lag kube-apiserver-1 stops calling it');
});

t.test('a lagging kube-apiserver calls the path that was renamed away', async (t) => {
  const { api, hook, caller } = await rig(t, [{}, { lagMs: LAG_MS }]);
  const stored = await register(api, 'validating', 'v', [entry(hook, '/validate-old')]);
  await caughtUp(api.apiservers[1]!);
  const renamed = await rawRequest(api, 'PUT', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v', {
    body: { ...stored, webhooks: [entry(hook, '/validate-new')] },
  });
  t.equal(renamed.status, 200);
  hook.received.length = 0;
  await caller.admit(createPodRequest(pod('web'), { apiserver: 0 }));
  await caller.admit(createPodRequest(pod('web'), { apiserver: 1 }));
  t.same(pathsOf(hook), ['/validate-new', '/validate-old'], 'kube-apiserver-1 still calls the old path');
  await caughtUp(api.apiservers[1]!);
  hook.received.length = 0;
  await caller.admit(createPodRequest(pod('web'), { apiserver: 1 }));
  t.same(pathsOf(hook), ['/validate-new'], 'then the new one');
});

t.test('a lagging kube-apiserver verifies with the caBundle it had before', async (t) => {
  const { api, hook, caller } = await rig(t, [{}, { lagMs: LAG_MS }]);
  const stored = await register(api, 'validating', 'v', [entry(hook, '/admit', hook.caBundle, { failurePolicy: 'Ignore' })]);
  await caughtUp(api.apiservers[1]!);
  const otherCa = Buffer.from(createCertificateAuthority('another-ca').certPem).toString('base64');
  const updated = await rawRequest(api, 'PUT', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v', {
    body: { ...stored, webhooks: [entry(hook, '/admit', otherCa, { failurePolicy: 'Ignore' })] },
  });
  t.equal(updated.status, 200);
  const before = caller.calls.length;
  await caller.admit(createPodRequest(pod('web'), { apiserver: 0 }));
  await caller.admit(createPodRequest(pod('web'), { apiserver: 1 }));
  const [fresh, lagging] = caller.calls.slice(before);
  t.match(fresh, { apiserver: 'kube-apiserver-0', outcome: 'error', error: /certificate signed by unknown authority/ }, 'the new bundle does not trust the server');
  t.match(lagging, { apiserver: 'kube-apiserver-1', outcome: 'allowed' }, 'the old bundle still does');
  await caughtUp(api.apiservers[1]!);
  await caller.admit(createPodRequest(pod('web'), { apiserver: 1 }));
  t.match(caller.calls.at(-1), { apiserver: 'kube-apiserver-1', outcome: 'error', error: /unknown authority/ });
});

t.test("namespaceSelector reads each kube-apiserver's namespace cache, and a namespace it has not seen is read live", async (t) => {
  const { api, hook, caller } = await rig(t, [{}, { lagMs: LAG_MS }]);
  await register(api, 'validating', 'v', [entry(hook, '/admit', hook.caBundle, { namespaceSelector: { matchLabels: { enforce: 'true' } } })]);
  await caughtUp(api.apiservers[1]!);
  api.store.createNamespace('team-b', { enforce: 'true' });
  // Not yet in kube-apiserver-1's cache: the live read finds it (no 404), with its labels.
  await caller.admit(createPodRequest(pod('web', 'team-b'), { apiserver: 1 }));
  t.equal(hook.received.length, 1);
  await caughtUp(api.apiservers[1]!);
  api.store.createNamespace('team-b', { enforce: 'false' });
  hook.received.length = 0;
  await caller.admit(createPodRequest(pod('web', 'team-b'), { apiserver: 0 }));
  await caller.admit(createPodRequest(pod('web', 'team-b'), { apiserver: 1 }));
  t.equal(hook.received.length, 1, 'only the lagging kube-apiserver still sees enforce=true');
  t.match(caller.calls.at(-1), { apiserver: 'kube-apiserver-1' });
});

t.test('a lag spike holds changes back for its duration, in order, then the usual lag applies', async (t) => {
  const { api } = await rig(t, 2);
  const apiserver = api.apiservers[1]!;
  apiserver.lagSpike(800, 1200);
  t.equal(apiserver.lagMs, 800);
  const spikeStarted = performance.now();
  api.store.createNamespace('first');
  api.store.createNamespace('second');
  t.equal(apiserver.backlog, 2);
  const waited = await caughtUp(apiserver);
  t.ok(waited >= 700, `both arrived after ${Math.round(waited)} ms`);
  // The spike ends by a timer, which a busy machine fires late, never early.
  while (apiserver.lagMs !== 0 && performance.now() - spikeStarted < 30_000) await sleep(20);
  t.equal(apiserver.lagMs, 0, 'the spike is over');
  t.ok(performance.now() - spikeStarted >= 1150, 'not before its duration');
  api.store.createNamespace('third');
  t.equal(apiserver.backlog, 0, 'a change reaches it at once again');
});

t.test('each kube-apiserver keeps its own connection pools, one per webhook path', async (t) => {
  const { api, hook, caller } = await rig(t, 2);
  await register(api, 'validating', 'v', [
    webhookEntry('a.example.com', hook.caBundle, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/a' }, caBundle: hook.caBundle } }),
    webhookEntry('b.example.com', hook.caBundle, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/b' }, caBundle: hook.caBundle } }),
  ]);
  // One at a time, so that each pool holds one connection.
  for (let round = 0; round < 3; round++) {
    for (const apiserver of [0, 1]) await caller.admit(createPodRequest(pod('web'), { apiserver }));
  }
  const connections = new Set(hook.received.map((r) => r.connection));
  t.equal(hook.received.length, 12);
  t.equal(connections.size, 4, 'two kube-apiservers times two paths: four connections, each reused');
  t.same(caller.pools.sizes, { 'kube-apiserver-0': 2, 'kube-apiserver-1': 2 });
});

t.test('restarting one kube-apiserver cuts its connections and watches, drops its pools, and the others serve meanwhile', async (t) => {
  const { api, hook, caller } = await rig(t, 2);
  await register(api, 'validating', 'v', [entry(hook)]);
  await caller.admit(createPodRequest(pod('web'), { apiserver: 1 }));
  const firstConnection = hook.received.at(-1)!.connection;

  // A watch on whichever kube-apiserver the next connection reaches; open one on each.
  const watches = [await openWatch(api), await openWatch(api)];
  const onRestarted = watches.find((w) => w.apiserver === 'kube-apiserver-1');
  t.ok(onRestarted, 'one of the two watches is served by kube-apiserver-1');
  // Down until the checks below are done (a bounded wait: back after 60 s whatever happens).
  const backUp = new AbortController();
  const restarting = api.apiservers[1]!.restart({ downMs: 60_000, signal: backUp.signal });
  t.equal(api.apiservers[1]!.up, false);
  await onRestarted!.ended;
  t.pass("kube-apiserver-1's watch was cut");
  t.equal(watches.find((w) => w.apiserver === 'kube-apiserver-0')!.isEnded(), false, "kube-apiserver-0's watch goes on");
  for (let i = 0; i < 3; i++) await rawRequest(api, 'GET', '/api/v1/namespaces/webhooks');
  const meanwhile = api.requests.filter((r) => r.path === '/api/v1/namespaces/webhooks').map((r) => r.apiserver);
  t.same(meanwhile, ['kube-apiserver-0', 'kube-apiserver-0', 'kube-apiserver-0'], 'new connections went to the one that is up');
  await t.rejects(caller.admit(createPodRequest(pod('web'), { apiserver: 1 })), /kube-apiserver-1 is down/);
  backUp.abort();
  await restarting;
  t.equal(api.apiservers[1]!.incarnation, 2);
  await caller.admit(createPodRequest(pod('web'), { apiserver: 1 }));
  t.not(hook.received.at(-1)!.connection, firstConnection, 'the restarted kube-apiserver opened a new connection to the webhook');
  for (const watch of watches) watch.close();
});

t.test('a request in flight on a kube-apiserver that goes down is lost with it: refused, never admitted by its emptied caches', async (t) => {
  const { api, hook, caller } = await rig(t, 2);
  const mutatingEntry = webhookEntry('slow.example.com', hook.caBundle, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/slow' }, caBundle: hook.caBundle }, failurePolicy: 'Ignore' });
  await register(api, 'mutating', 'm', [mutatingEntry]);
  await register(api, 'validating', 'v', [entry(hook, '/deny')]);
  let mutatingCallArrived = (): void => undefined;
  const arrived = new Promise<void>((resolve) => (mutatingCallArrived = resolve));
  hook.respond = (received) => {
    if (received.path.startsWith('/slow')) {
      mutatingCallArrived();
      return { delayMs: 1000, then: allow(received) };
    }
    return deny(received, { code: 403, message: 'no' });
  };
  const admitting = caller.admit(createPodRequest(pod('web'), { apiserver: 1 }));
  await arrived;
  const backUp = new AbortController();
  const restarting = api.apiservers[1]!.restart({ downMs: 60_000, signal: backUp.signal });
  await t.rejects(admitting, { name: 'ControlPlaneDownError', message: /kube-apiserver-1 went down while it served the request/ });
  t.notOk(pathsOf(hook).includes('/deny'), 'no validating call from a kube-apiserver that is down');
  backUp.abort();
  await restarting;
  const after = await caller.admit(createPodRequest(pod('web'), { apiserver: 1 }));
  t.equal(after.allowed, false, 'back up, with its caches listed afresh: the validating webhook denies');
});

async function openWatch(api: FakeApiServer): Promise<{ apiserver: string | undefined; ended: Promise<void>; isEnded(): boolean; close(): void }> {
  const openedAfter = performance.now();
  let ended = false;
  let close = (): void => undefined;
  const endedPromise = new Promise<void>((resolve, reject) => {
    const req = request(new URL('/api/v1/namespaces?watch=true', api.url), { ca: api.caPem, agent: false, headers: { Authorization: `Bearer ${api.token}` } }, (res) => {
      res.resume();
      res.on('close', () => {
        ended = true;
        resolve();
      });
    });
    req.on('error', () => {
      ended = true;
      resolve();
    });
    close = () => req.destroy();
    req.end();
    setTimeout(() => reject(new Error('watch did not end')), 20_000).unref();
  });
  const record = await api.waitForRequest((r) => r.verb === 'watch' && r.startedAt >= openedAfter, { phase: 'started' });
  return { apiserver: record.apiserver, ended: endedPromise, isEnded: () => ended, close };
}
