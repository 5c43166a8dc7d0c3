// REST semantics of the double (local-cluster/CONTRACT.md section 5): each status code and body, resourceVersion,
// generation, patch types, delete, watch, and the core resources the server needs.
import t from 'tap';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { request } from 'node:https';

const api = await startFakeApiServer({ namespaces: ['kas'] });
t.teardown(() => api.close());

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const hook = (name = 'a.b.c', extra: Record<string, unknown> = {}) => ({
  name,
  clientConfig: { service: { name: 'hook', namespace: 'webhooks' } },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...extra,
});
type Obj = { metadata: { name: string; resourceVersion: string; uid: string; generation: number; creationTimestamp: string; managedFields: unknown[] }; webhooks: Record<string, unknown>[] };

async function createDemo(name = 'demo'): Promise<Obj> {
  const reply = await rawRequest(api, 'POST', MWC, { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name }, webhooks: [hook()] } });
  if (reply.status !== 201) throw new Error(reply.text);
  return reply.json as Obj;
}
const remove = (name = 'demo') => rawRequest(api, 'DELETE', `${MWC}/${name}`);
const status = (code: number, reason: string, message: string, details?: Record<string, unknown>) => ({
  kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code,
});

t.test('401 without a valid token', async (t) => {
  for (const token of [null, 'wrong']) {
    const reply = await rawRequest(api, 'GET', MWC, { token });
    t.equal(reply.status, 401);
    t.same(reply.json, status(401, 'Unauthorized', 'Unauthorized'));
  }
});

t.test('unknown paths and methods', async (t) => {
  const unknown = await rawRequest(api, 'GET', '/apis/example.com/v1/widgets');
  t.same(unknown.json, status(404, 'NotFound', 'the server could not find the requested resource', {}));
  const namedPost = await rawRequest(api, 'POST', '/apis/apps/v1/namespaces/kas/deployments/x', { body: {} });
  t.same(namedPost.json, status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'));
});

t.test('create: 201 with system metadata; 409 AlreadyExists; 400 on a wrong apiVersion', async (t) => {
  const created = await createDemo();
  t.match(created.metadata.uid, /^[0-9a-f-]{36}$/);
  t.match(created.metadata.resourceVersion, /^\d+$/);
  t.equal(created.metadata.generation, 1);
  t.match(created.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  t.equal(created.metadata.managedFields.length, 1);
  const again = await rawRequest(api, 'POST', MWC, { body: { metadata: { name: 'demo' }, webhooks: [] } });
  t.equal(again.status, 409);
  t.same(again.json, status(409, 'AlreadyExists', 'mutatingwebhookconfigurations.admissionregistration.k8s.io "demo" already exists', { name: 'demo', group: 'admissionregistration.k8s.io', kind: 'mutatingwebhookconfigurations' }));
  const wrongVersion = await rawRequest(api, 'POST', MWC, { body: { apiVersion: 'admissionregistration.k8s.io/v1beta1', metadata: { name: 'x' } } });
  t.equal(wrongVersion.status, 400);
  t.equal((wrongVersion.json as { reason: string }).reason, 'BadRequest');
  const wrongType = await rawRequest(api, 'POST', MWC, { body: 'x', contentType: 'text/plain' });
  t.equal(wrongType.status, 415);
  await remove();
});

t.test('update: 200, generation, 422 without resourceVersion, 409 stale, 404 missing, 400 name mismatch', async (t) => {
  const created = await createDemo();
  const changed = { ...created, webhooks: [hook('a.b.c', { timeoutSeconds: 3 })] };
  const ok = await rawRequest(api, 'PUT', `${MWC}/demo`, { body: changed });
  t.equal(ok.status, 200);
  const updated = ok.json as Obj;
  t.equal(updated.metadata.generation, 2, 'a change of webhooks bumps generation');
  t.equal(updated.metadata.uid, created.metadata.uid);
  t.not(updated.metadata.resourceVersion, created.metadata.resourceVersion);
  const labelsOnly = await rawRequest(api, 'PUT', `${MWC}/demo`, { body: { ...updated, metadata: { ...updated.metadata, labels: { a: 'b' } } } });
  t.equal((labelsOnly.json as Obj).metadata.generation, 2, 'a metadata-only change does not');

  const noVersion = await rawRequest(api, 'PUT', `${MWC}/demo`, { body: { ...changed, metadata: { name: 'demo' } } });
  t.same(noVersion.json, {
    ...status(422, 'Invalid', 'mutatingwebhookconfigurations.admissionregistration.k8s.io "demo" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update', {
      name: 'demo', group: 'admissionregistration.k8s.io', kind: 'mutatingwebhookconfigurations',
      causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be specified for an update', field: 'metadata.resourceVersion' }],
    }),
  });
  const stale = await rawRequest(api, 'PUT', `${MWC}/demo`, { body: changed });
  t.same(stale.json, status(409, 'Conflict', 'Operation cannot be fulfilled on mutatingwebhookconfigurations.admissionregistration.k8s.io "demo": the object has been modified; please apply your changes to the latest version and try again', { name: 'demo', group: 'admissionregistration.k8s.io', kind: 'mutatingwebhookconfigurations' }));
  const missing = await rawRequest(api, 'PUT', `${MWC}/nope`, { body: { ...changed, metadata: { name: 'nope', resourceVersion: '1' } } });
  t.same(missing.json, status(404, 'NotFound', 'mutatingwebhookconfigurations.admissionregistration.k8s.io "nope" not found', { name: 'nope', group: 'admissionregistration.k8s.io', kind: 'mutatingwebhookconfigurations' }));
  const mismatch = await rawRequest(api, 'PUT', `${MWC}/demo`, { body: { ...changed, metadata: { name: 'other', resourceVersion: '1' } } });
  t.same(mismatch.json, status(400, 'BadRequest', 'the name of the object (other) does not match the name on the URL (demo)'));
  await remove();
});

t.test('patch: the four content types, 415, 404, stale resourceVersion, apply rules', async (t) => {
  await createDemo();
  const patch = (body: unknown, contentType: string, query = '') => rawRequest(api, 'PATCH', `${MWC}/demo${query}`, { body: typeof body === 'string' ? body : JSON.stringify(body), contentType });
  const json = await patch([{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 4 }], 'application/json-patch+json');
  t.equal((json.json as Obj).webhooks[0]!.timeoutSeconds, 4);
  t.equal((json.json as Obj).metadata.generation, 2);
  const strategic = await patch({ webhooks: [{ name: 'x.y.z', clientConfig: { url: 'https://x.example.com' }, sideEffects: 'None', admissionReviewVersions: ['v1'] }] }, 'application/strategic-merge-patch+json');
  t.same((strategic.json as Obj).webhooks.map((w) => w.name), ['a.b.c', 'x.y.z'], 'strategic merge keys webhooks by name');
  t.equal((strategic.json as Obj).webhooks[1]!.failurePolicy, 'Fail', 'defaults apply to patched-in webhooks');
  const merge = await patch({ webhooks: [hook('only.one.left')] }, 'application/merge-patch+json');
  t.same((merge.json as Obj).webhooks.map((w) => w.name), ['only.one.left'], 'merge patch replaces lists');
  const invalid = await patch([{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 99 }], 'application/json-patch+json');
  t.equal(invalid.status, 422, 'validation applies to patches');
  const unsupported = await patch({}, 'application/json');
  t.same(unsupported.json, status(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml'));
  const missing = await rawRequest(api, 'PATCH', `${MWC}/nope`, { body: '{}', contentType: 'application/merge-patch+json' });
  t.equal(missing.status, 404);
  const stale = await patch({ metadata: { resourceVersion: '1' } }, 'application/merge-patch+json');
  t.equal(stale.status, 409);
  t.equal((stale.json as { reason: string }).reason, 'Conflict');
  const noManager = await patch('metadata: {name: demo}', 'application/apply-patch+yaml');
  t.same(noManager.json, status(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', {
    group: 'meta.k8s.io', kind: 'PatchOptions', causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }],
  }));
  const forced = await patch({}, 'application/merge-patch+json', '?force=true');
  t.equal((forced.json as { message: string }).message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
  const applied = await rawRequest(api, 'PATCH', `${MWC}/applied?fieldManager=kas`, {
    body: `apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: applied\nwebhooks: []\n`,
    contentType: 'application/apply-patch+yaml',
  });
  t.equal(applied.status, 201, 'apply creates a missing object');
  t.equal(api.store.get('mutatingwebhookconfigurations', undefined, 'applied')?.metadata?.generation, 1);
  await remove();
  await remove('applied');
});

t.test('delete: 200 success Status, 404, options validated, preconditions, dryRun', async (t) => {
  const created = await createDemo();
  const badPolicy = await rawRequest(api, 'DELETE', `${MWC}/demo?propagationPolicy=Later`);
  t.equal((badPolicy.json as { message: string }).message, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"');
  t.equal(badPolicy.status, 422);
  const precondition = await rawRequest(api, 'DELETE', `${MWC}/demo`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'other' } } });
  t.equal(precondition.status, 409);
  const dry = await rawRequest(api, 'DELETE', `${MWC}/demo?dryRun=All`);
  t.equal(dry.status, 200);
  t.ok(api.store.get('mutatingwebhookconfigurations', undefined, 'demo'), 'dryRun deletes nothing');
  const deleted = await rawRequest(api, 'DELETE', `${MWC}/demo`, { body: '', contentType: 'application/json' });
  t.same(deleted.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'demo', group: 'admissionregistration.k8s.io', kind: 'mutatingwebhookconfigurations', uid: created.metadata.uid } });
  const again = await remove();
  t.same(again.json, status(404, 'NotFound', 'mutatingwebhookconfigurations.admissionregistration.k8s.io "demo" not found', { name: 'demo', group: 'admissionregistration.k8s.io', kind: 'mutatingwebhookconfigurations' }));
});

/** Opens a watch and collects its lines until it ends or `count` events arrived. */
function watchLines(path: string, count: number, onOpen?: () => void): Promise<{ lines: { type: string; object: Obj & { message?: string; code?: number } }[]; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const lines: { type: string; object: Obj }[] = [];
    const req = request(new URL(path, api.url), { ca: api.caPem, headers: { Authorization: `Bearer ${api.token}` }, signal: AbortSignal.timeout(10_000), agent: false }, (res) => {
      let buffer = '';
      onOpen?.();
      res.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          lines.push(JSON.parse(buffer.slice(0, newline)) as { type: string; object: Obj });
          buffer = buffer.slice(newline + 1);
          if (lines.length === count) {
            req.destroy();
            resolve({ lines, ended: false });
          }
        }
      });
      res.on('end', () => resolve({ lines, ended: true }));
    });
    req.on('error', (error) => (lines.length >= count ? undefined : reject(error)));
    req.end();
  });
}

t.test('watch: synthetic ADDED from resourceVersion 0, changes after a given one, 410 when too old, timeoutSeconds', async (t) => {
  const first = await createDemo('w1');
  const synthetic = await watchLines(`${MWC}?watch=true&resourceVersion=0`, 1);
  t.equal(synthetic.lines[0]!.type, 'ADDED');
  t.equal(synthetic.lines[0]!.object.metadata.name, 'w1');

  const events = watchLines(`${MWC}?watch=true&resourceVersion=${first.metadata.resourceVersion}`, 3);
  await api.waitForRequest((r) => r.verb === 'watch' && r.path.includes(`resourceVersion=${first.metadata.resourceVersion}`), { phase: 'started' });
  await createDemo('w2');
  await rawRequest(api, 'PATCH', `${MWC}/w2`, { body: '{"metadata":{"labels":{"x":"y"}}}', contentType: 'application/merge-patch+json' });
  await remove('w2');
  const seen = await events;
  t.same(seen.lines.map((l) => `${l.type} ${l.object.metadata.name}`), ['ADDED w2', 'MODIFIED w2', 'DELETED w2']);
  t.ok(Number(seen.lines[2]!.object.metadata.resourceVersion) > Number(seen.lines[1]!.object.metadata.resourceVersion), 'DELETED carries a newer resourceVersion');

  // Push the first configuration's version out of the event history (5000 events are kept).
  for (let i = 0; i < 5001; i++) api.store.put('secrets', { metadata: { name: 'churn', namespace: 'kas' }, data: { i: String(i) } });
  const expired = await watchLines(`${MWC}?watch=true&resourceVersion=${first.metadata.resourceVersion}`, 1);
  t.equal(expired.lines[0]!.type, 'ERROR');
  t.equal(expired.lines[0]!.object.code, 410);
  t.match(expired.lines[0]!.object.message, /^too old resource version: \d+ \(\d+\)$/);
  api.store.delete('secrets', 'kas', 'churn');

  const timed = await watchLines(`${MWC}?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dnone`, 99);
  t.equal(timed.ended, true, 'the server ends the watch after timeoutSeconds');
  t.same(timed.lines, []);
  await remove('w1');
});

t.test('watch-list (sendInitialEvents): what exists, the end-of-initial-events bookmark, then changes; options checked as kube-apiserver does', async (t) => {
  await createDemo('wl1');
  const listed = await rawRequest(api, 'GET', MWC);
  const listVersion = (listed.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const query = 'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';
  const stream = watchLines(`${MWC}?${query}`, 3);
  await api.waitForRequest((r) => r.verb === 'watch' && r.path.includes('sendInitialEvents=true'), { phase: 'started' });
  await createDemo('wl2');
  const seen = await stream;
  t.same(seen.lines.map((l) => `${l.type} ${l.object.metadata.name ?? ''}`), ['ADDED wl1', 'BOOKMARK ', 'ADDED wl2']);
  const bookmark = seen.lines[1]!.object as Obj & { kind: string; apiVersion: string };
  t.same(
    { kind: bookmark.kind, apiVersion: bookmark.apiVersion, metadata: bookmark.metadata },
    { kind: 'MutatingWebhookConfiguration', apiVersion: 'admissionregistration.k8s.io/v1', metadata: { resourceVersion: listVersion, annotations: { 'k8s.io/initial-events-end': 'true' } } },
    'the bookmark carries the snapshot resourceVersion and the annotation a reflector waits for',
  );

  const message = async (query: string): Promise<string> => {
    const reply = await rawRequest(api, 'GET', `${MWC}?watch=true&${query}`);
    t.equal(reply.status, 422, query);
    return (reply.json as { message: string }).message;
  };
  t.equal(
    await message('sendInitialEvents=true&resourceVersionMatch=NotOlderThan'),
    'ListOptions.meta.k8s.io "" is invalid: allowWatchBookmarks: Forbidden: allowWatchBookmarks must be set to true when sendInitialEvents is provided',
  );
  t.equal(
    await message('sendInitialEvents=true&allowWatchBookmarks=true'),
    'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
  );
  t.equal(
    await message('resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true'),
    'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
  );
  await remove('wl1');
  await remove('wl2');
});

t.test('list: kind, resourceVersion, items without apiVersion/kind, selectors', async (t) => {
  await createDemo('l1');
  const list = await rawRequest(api, 'GET', `${MWC}?fieldSelector=metadata.name%3Dl1`);
  const body = list.json as { kind: string; apiVersion: string; metadata: { resourceVersion: string }; items: Record<string, unknown>[] };
  t.equal(body.kind, 'MutatingWebhookConfigurationList');
  t.equal(body.apiVersion, 'admissionregistration.k8s.io/v1');
  t.match(body.metadata.resourceVersion, /^\d+$/);
  t.equal(body.items.length, 1);
  t.notOk('kind' in body.items[0]!);
  await remove('l1');
});

t.test('core resources: namespaces, secrets, leases, pods/replicasets/deployments, clusterroles', async (t) => {
  const ns = await rawRequest(api, 'GET', '/api/v1/namespaces/kas');
  t.equal((ns.json as { metadata: { labels: Record<string, string> } }).metadata.labels['kubernetes.io/metadata.name'], 'kas');
  const missingNs = await rawRequest(api, 'POST', '/api/v1/namespaces/nowhere/secrets', { body: { metadata: { name: 's' } } });
  t.same(missingNs.json, status(404, 'NotFound', 'namespaces "nowhere" not found', { name: 'nowhere', kind: 'namespaces' }));

  const plainText = await rawRequest(api, 'POST', '/api/v1/namespaces/kas/secrets', { body: { metadata: { name: 'tls' }, data: { 'tls.key': '-----BEGIN' } } });
  t.same(plainText.json, status(400, 'BadRequest', 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0'), 'data must be base64');
  const secret = await rawRequest(api, 'POST', '/api/v1/namespaces/kas/secrets', { body: { metadata: { name: 'tls' }, data: { a: 'Yg==' } } });
  t.equal(secret.status, 201);
  const secretBody = secret.json as Obj & { data: Record<string, string> };
  const unconditional = await rawRequest(api, 'PUT', '/api/v1/namespaces/kas/secrets/tls', { body: { metadata: { name: 'tls' }, data: { a: 'Yw==' } } });
  t.equal(unconditional.status, 200, 'Secrets allow an update without resourceVersion, like the real store');
  const stale = await rawRequest(api, 'PUT', '/api/v1/namespaces/kas/secrets/tls', { body: { ...secretBody, data: { a: 'ZA==' } } });
  t.same(stale.json, status(409, 'Conflict', 'Operation cannot be fulfilled on secrets "tls": the object has been modified; please apply your changes to the latest version and try again', { name: 'tls', kind: 'secrets' }));
  const exists = await rawRequest(api, 'POST', '/api/v1/namespaces/kas/secrets', { body: { metadata: { name: 'tls' } } });
  t.same(exists.json, status(409, 'AlreadyExists', 'secrets "tls" already exists', { name: 'tls', kind: 'secrets' }));

  const lease = await rawRequest(api, 'POST', '/apis/coordination.k8s.io/v1/namespaces/kas/leases', { body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a' } } });
  t.equal(lease.status, 201);
  const leaseGone = await rawRequest(api, 'DELETE', '/apis/coordination.k8s.io/v1/namespaces/kas/leases/leader');
  t.equal(leaseGone.status, 200);
  const leaseMissing = await rawRequest(api, 'GET', '/apis/coordination.k8s.io/v1/namespaces/kas/leases/leader');
  t.equal((leaseMissing.json as { message: string }).message, 'leases.coordination.k8s.io "leader" not found');

  const deployment = api.store.put('deployments', { metadata: { name: 'kas', namespace: 'kas' }, spec: { replicas: 2 } });
  const rs = api.store.put('replicasets', { metadata: { name: 'kas-1', namespace: 'kas', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'kas', uid: deployment.metadata!.uid!, controller: true }] } });
  api.store.put('pods', { metadata: { name: 'kas-1-x', namespace: 'kas', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'kas-1', uid: rs.metadata!.uid!, controller: true }] } });
  const podRead = await rawRequest(api, 'GET', '/api/v1/namespaces/kas/pods/kas-1-x');
  t.equal((podRead.json as { metadata: { ownerReferences: { name: string }[] } }).metadata.ownerReferences[0]!.name, 'kas-1');
  const rsRead = await rawRequest(api, 'GET', '/apis/apps/v1/namespaces/kas/replicasets/kas-1');
  t.equal((rsRead.json as { metadata: { ownerReferences: { uid: string }[] } }).metadata.ownerReferences[0]!.uid, deployment.metadata!.uid);
  api.store.scaleDeployment('kas', 'kas', 0);
  const scaled = await rawRequest(api, 'GET', '/apis/apps/v1/namespaces/kas/deployments/kas');
  t.equal((scaled.json as { spec: { replicas: number } }).spec.replicas, 0);
  t.equal((scaled.json as Obj).metadata.generation, 2);
  api.store.markDeleting('deployments', 'kas', 'kas');
  const deleting = await rawRequest(api, 'GET', '/apis/apps/v1/namespaces/kas/deployments/kas');
  t.match((deleting.json as { metadata: { deletionTimestamp: string } }).metadata.deletionTimestamp, /Z$/);
  api.store.delete('deployments', 'kas', 'kas');
  const gone = await rawRequest(api, 'GET', '/apis/apps/v1/namespaces/kas/deployments/kas');
  t.equal(gone.status, 404);

  const role = api.store.put('clusterroles', { metadata: { name: 'kube-admission-server' }, rules: [] });
  const roleRead = await rawRequest(api, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/kube-admission-server');
  t.equal((roleRead.json as Obj).metadata.uid, role.metadata!.uid);
});

t.test('store.waitFor resolves on the change it waits for and rejects at its deadline', async (t) => {
  const appeared = api.store.waitFor('leases', 'kas', 'later', (lease) => lease !== undefined, { timeoutMs: 5000 });
  await rawRequest(api, 'POST', '/apis/coordination.k8s.io/v1/namespaces/kas/leases', { body: { metadata: { name: 'later' } } });
  t.equal((await appeared)?.metadata?.name, 'later');
  const gone = api.store.waitFor('leases', 'kas', 'later', (lease) => lease === undefined, { timeoutMs: 5000 });
  await rawRequest(api, 'DELETE', '/apis/coordination.k8s.io/v1/namespaces/kas/leases/later');
  t.equal(await gone, undefined);
  await t.rejects(api.store.waitFor('leases', 'kas', 'never', (lease) => lease !== undefined, { timeoutMs: 50 }), /waitFor leases kas\/never/);
});
