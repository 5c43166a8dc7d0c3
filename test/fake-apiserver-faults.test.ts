// Fault injection, the request log and the RBAC mode of the double.
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import t from 'tap';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const SECRETS = '/api/v1/namespaces/kas/secrets';

t.test('latency delays, then the request is served; the log shows it', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  api.faults.add({ resource: 'mutatingwebhookconfigurations', verb: 'list' }, { latencyMs: 300 });
  const started = performance.now();
  const reply = await rawRequest(api, 'GET', MWC);
  t.equal(reply.status, 200);
  t.ok(performance.now() - started >= 290, 'at least the added latency');
  const record = await api.waitForRequest((r) => r.verb === 'list');
  t.same(record.fault, { latencyMs: 300 });
  t.equal(record.verb, 'list');
  t.ok(record.endedAt! - record.startedAt >= 290);
});

t.test('hang: no answer until the client aborts; close() ends hanging requests', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  api.faults.add({ resource: 'secrets', verb: 'get' }, { hang: true });
  const aborted = rawRequest(api, 'GET', '/api/v1/namespaces/default/secrets/x', { timeoutMs: 300 });
  await t.rejects(aborted, { name: 'AbortError' });
  const record = await api.waitForRequest((r) => r.verb === 'get');
  t.equal(record.status, undefined, 'nothing was answered');
  const hanging = rawRequest(api, 'GET', '/api/v1/namespaces/default/secrets/y', { timeoutMs: 20_000 });
  await api.waitForRequest((r) => r.name === 'y', { phase: 'started' });
  const closing = performance.now();
  await api.close();
  await t.rejects(hanging, 'the hanging request fails when the server closes');
  t.ok(performance.now() - closing < 2000, 'close() is bounded');
});

t.test('5xx with and without Retry-After', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  api.faults.add({ verb: 'list' }, { status: 503, retryAfterSeconds: 2 }, { times: 1 });
  api.faults.add({ verb: 'list' }, { status: 500 }, { times: 1 });
  const retry = await rawRequest(api, 'GET', MWC);
  t.equal(retry.status, 503);
  t.equal(retry.headers['retry-after'], '2');
  t.same(retry.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server is currently unable to handle the request', reason: 'ServiceUnavailable', details: { retryAfterSeconds: 2 }, code: 503 });
  const plain = await rawRequest(api, 'GET', MWC);
  t.equal(plain.status, 500);
  t.equal(plain.headers['retry-after'], undefined);
  t.equal((plain.json as { reason: string }).reason, 'InternalError');
  t.equal((await rawRequest(api, 'GET', MWC)).status, 200, 'faults with times run out');
});

t.test('409 storms: conflicts for a number of updates of one name', async (t) => {
  const api = await startFakeApiServer({ namespaces: ['kas'] });
  t.teardown(() => api.close());
  const created = (await rawRequest(api, 'POST', SECRETS, { body: { metadata: { name: 'ca' } } })).json as { metadata: { resourceVersion: string } };
  api.faults.add({ resource: 'secrets', verb: 'update', name: 'ca' }, { conflict: true }, { times: 3 });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const reply = await rawRequest(api, 'PUT', `${SECRETS}/ca`, { body: { metadata: { name: 'ca', resourceVersion: created.metadata.resourceVersion } } });
    statuses.push(reply.status);
    if (reply.status === 409) t.equal((reply.json as { message: string }).message, 'Operation cannot be fulfilled on secrets "ca": the object has been modified; please apply your changes to the latest version and try again');
  }
  t.same(statuses, [409, 409, 409, 200]);
  const other = await rawRequest(api, 'POST', SECRETS, { body: { metadata: { name: 'other' } } });
  t.equal(other.status, 201, 'other names and verbs are untouched');
});

t.test('connection reset', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  api.faults.add({ resource: 'leases' }, { reset: true });
  await t.rejects(rawRequest(api, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/x'), { code: 'ECONNRESET' });
  const record = await api.waitForRequest((r) => r.resource === 'leases');
  t.equal(record.status, undefined);
});

t.test('the request log proves concurrency', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  for (const name of ['one', 'two']) await rawRequest(api, 'POST', MWC, { body: { metadata: { name }, webhooks: [] } });
  api.faults.add({ verb: 'delete' }, { latencyMs: 200 });
  await Promise.all(['one', 'two'].map((name) => rawRequest(api, 'DELETE', `${MWC}/${name}`)));
  const [a, b] = await Promise.all(['one', 'two'].map((name) => api.waitForRequest((r) => r.verb === 'delete' && r.name === name)));
  if (!a || !b) throw new Error('deletes missing from the log');
  t.ok(a.startedAt < b.endedAt! && b.startedAt < a.endedAt!, 'the two deletes overlapped');
  t.same(api.store.list('mutatingwebhookconfigurations'), []);
});

t.test('RBAC mode: rules of Roles and ClusterRoles, 403 for anything else', async (t) => {
  const api = await startFakeApiServer({ namespaces: ['kas', 'other'] });
  t.teardown(() => api.close());
  api.setRbac({
    user: 'system:serviceaccount:kas:kube-admission-server',
    clusterRoles: [{
      metadata: { name: 'kube-admission-server' },
      rules: [
        { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations'], verbs: ['create', 'list', 'watch'] },
        { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations'], verbs: ['get', 'update', 'delete'], resourceNames: ['kas'] },
      ],
    }],
    roles: [{ metadata: { name: 'kas', namespace: 'kas' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'update'] }] }],
  });
  t.equal((await rawRequest(api, 'POST', MWC, { body: { metadata: { name: 'kas' }, webhooks: [] } })).status, 201);
  t.equal((await rawRequest(api, 'GET', `${MWC}/kas`)).status, 200, 'resourceNames allow the named object');
  const otherName = await rawRequest(api, 'GET', `${MWC}/someone-else`);
  t.same(otherName.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'mutatingwebhookconfigurations.admissionregistration.k8s.io "someone-else" is forbidden: User "system:serviceaccount:kas:kube-admission-server" cannot get resource "mutatingwebhookconfigurations" in API group "admissionregistration.k8s.io" at the cluster scope',
    reason: 'Forbidden', details: { name: 'someone-else', group: 'admissionregistration.k8s.io', kind: 'mutatingwebhookconfigurations' }, code: 403,
  });
  const patch = await rawRequest(api, 'PATCH', `${MWC}/kas`, { body: '{}', contentType: 'application/merge-patch+json' });
  t.equal(patch.status, 403, 'patch is not update');
  t.equal((await rawRequest(api, 'POST', SECRETS, { body: { metadata: { name: 's' } } })).status, 201, 'the Role applies in its namespace');
  const elsewhere = await rawRequest(api, 'POST', '/api/v1/namespaces/other/secrets', { body: { metadata: { name: 's' } } });
  t.equal((elsewhere.json as { message: string }).message, 'secrets is forbidden: User "system:serviceaccount:kas:kube-admission-server" cannot create resource "secrets" in API group "" in the namespace "other"');
  const list = await rawRequest(api, 'GET', SECRETS);
  t.equal(list.status, 403, 'list was not granted');
  t.equal((await rawRequest(api, 'GET', '/apis/apps/v1/namespaces/kas/deployments/kas')).status, 403);
  api.setRbac(undefined);
  t.equal((await rawRequest(api, 'GET', SECRETS)).status, 200, 'RBAC mode off: everything authenticated is allowed');
});

t.test('close() ends a connection still in its TLS handshake: it cannot open a watch afterwards that holds the outage for good', async (t) => {
  const api = await startFakeApiServer();
  const port = Number(new URL(api.url).port);
  const tcp = connect(port, '127.0.0.1');
  await once(tcp, 'connect');
  // The outage begins while this client has sent nothing yet; then it finishes its handshake and
  // asks for a watch, as a replica re-establishing its informer would.
  const closed = api.close().then(() => 'closed');
  const watch = request({
    createConnection: () => tlsConnect({ socket: tcp, ca: api.caPem, host: '127.0.0.1' }),
    path: '/api/v1/namespaces/default/secrets?watch=1',
    headers: { Authorization: `Bearer ${api.token}` },
  });
  const watchEnded = new Promise<string>((resolve) => {
    watch.on('error', () => resolve('failed'));
    watch.on('response', (response) => response.on('close', () => resolve('ended')).resume());
  });
  watch.end();
  const giveUp = new AbortController();
  const waiting = sleep(20_000, 'still waiting after 20 s', { signal: giveUp.signal }).catch(() => 'given up');
  const outcome = await Promise.race([closed, waiting]);
  giveUp.abort();
  t.equal(outcome, 'closed', 'close() resolved');
  watch.destroy(); // on failure, lets the file end: close() then resolves too
  t.match(await watchEnded, /failed|ended/, 'the late client got no lasting watch');
});

t.test('close() then reopen(): the same port, token, CA and store, as an apiserver restarted on the same etcd', async (t) => {
  const api = await startFakeApiServer({ namespaces: ['kas'] });
  t.teardown(() => api.close());
  const created = await rawRequest(api, 'POST', SECRETS, { body: { metadata: { name: 'kept' }, data: {} } });
  t.equal(created.status, 201);
  await api.close();
  await t.rejects(rawRequest(api, 'GET', `${SECRETS}/kept`), { code: 'ECONNREFUSED' }, 'down: connections are refused');
  await api.reopen();
  const read = await rawRequest(api, 'GET', `${SECRETS}/kept`);
  t.equal(read.status, 200, 'up again: the same kubeconfig works and the object survived');
  t.equal((read.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion, (created.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
  t.same(api.requests.filter((r) => r.resource === 'secrets').map((r) => r.verb), ['create', 'get'], 'one request log across the restart');
});

t.test('a fault for one user (API Priority and Fairness sheds one flow): other users are served', async (t) => {
  const api = await startFakeApiServer({ namespaces: ['kas'] });
  t.teardown(() => api.close());
  const user = { username: 'system:serviceaccount:kas:server', groups: ['system:masters', 'system:authenticated'] };
  const token = api.issueToken(user);
  api.faults.add({ user: user.username }, { status: 429, retryAfterSeconds: 2 });
  const shed = await rawRequest(api, 'GET', SECRETS, { token });
  t.equal(shed.status, 429, 'the named user gets the fault');
  t.equal(shed.headers['retry-after'], '2');
  const served = await rawRequest(api, 'GET', SECRETS);
  t.equal(served.status, 200, 'the administrator is served');
});
