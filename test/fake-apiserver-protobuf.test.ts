// Protobuf request bodies, as typed clients send them (`kubectl create <kind>`, Helm's release
// Secrets): the double decodes kube-apiserver's envelope and the messages of the kinds it models
// (local-cluster/fake-apiserver/protobuf/messages.ts). The encoder is kubectl's own, so the oracle
// is independent of the decoder; a body it cannot decode is a 400, a kind it does not model a 415.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import { describeResult, kubectlMissing, runShell, shellPath } from './support/tools/kubectl.js';

const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const missing = kubectlMissing();
const api = await startFakeApiServer({ namespaces: ['team-a'] });
const dir = await mkdtemp(join(tmpdir(), 'protobuf-double-'));
t.teardown(async () => {
  await api.close();
  await rm(dir, { recursive: true, force: true });
});
const kubeconfig = join(dir, 'kubeconfig');
await api.writeKubeconfig(kubeconfig, { namespace: 'team-a' });
const env = { PATH: shellPath(), HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };

t.test('kubectl create sends protobuf, and what it sent is stored field for field', async (t) => {
  // kubectl is installed by `npm run setup`: without it this is a failure, never a skip.
  if (missing) {
    t.fail(missing);
    return;
  }
  const commands = [
    'create secret generic creds --from-literal=user=admin --from-literal=token=s3cr3t --type=example.com/creds',
    'create configmap settings --from-literal=mode=strict --from-literal=level=3',
    'create namespace team-b',
    'create serviceaccount robot',
    'create role reader --verb=get,list --resource=pods,configmaps',
    'create rolebinding reader --role=reader --serviceaccount=team-a:robot',
    'create clusterrole node-reader --verb=get --resource=nodes',
    'create clusterrolebinding node-reader --clusterrole=node-reader --user=alice --group=ops',
  ];
  for (const command of commands) {
    const result = await runShell(`kubectl ${command}`, { cwd: repositoryRoot(), env, timeoutMs: 200_000 }); // kubectl alone took over 60 s at a load of 28
    t.equal(result.code, 0, result.code === 0 ? `kubectl ${command}` : describeResult(result));
  }
  const creates = api.requests.filter((r) => r.method === 'POST');
  t.equal(creates.length, commands.length);
  t.ok(creates.every((r) => r.contentType === PROTOBUF), `every create came as protobuf (${[...new Set(creates.map((r) => r.contentType))].join(', ')})`);

  const secret = api.store.get('secrets', 'team-a', 'creds')!;
  t.equal(secret.type, 'example.com/creds');
  t.same(secret.data, { token: Buffer.from('s3cr3t').toString('base64'), user: Buffer.from('admin').toString('base64') });
  t.equal(secret.metadata?.namespace, 'team-a');
  t.notOk('generateName' in (secret.metadata ?? {}), 'empty strings of the message are not fields of the object');
  t.same(api.store.get('configmaps', 'team-a', 'settings')?.data, { level: '3', mode: 'strict' });
  t.ok(api.store.get('namespaces', undefined, 'team-b'));
  t.ok(api.store.get('serviceaccounts', 'team-a', 'robot'));
  t.same(api.store.get('roles', 'team-a', 'reader')?.rules, [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'configmaps'] }]);
  t.match(api.store.get('rolebindings', 'team-a', 'reader'), {
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
    subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'team-a' }],
  });
  t.same(api.store.get('clusterroles', undefined, 'node-reader')?.rules, [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }]);
  t.match(api.store.get('clusterrolebindings', undefined, 'node-reader')?.subjects, [
    { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
    { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'ops' },
  ]);
});

/** kube-apiserver's envelope: `k8s\0`, then runtime.Unknown{typeMeta{apiVersion, kind}, raw}. */
function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const typeMeta = new BinaryWriter().uint32(10).string(apiVersion).uint32(18).string(kind).finish();
  const unknown = new BinaryWriter().uint32(10).bytes(typeMeta).uint32(18).bytes(raw).finish();
  return Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), unknown]);
}

const post = (path: string, body: Buffer) => rawRequest(api, 'POST', path, { body: body.toString('latin1'), contentType: PROTOBUF });

t.test('a body that is not kube-apiserver protobuf is a 400; a field the definitions lack is refused, not dropped', async (t) => {
  const noMagic = await post('/api/v1/namespaces/team-a/configmaps', Buffer.from('not protobuf'));
  t.equal(noMagic.status, 400);
  t.match(noMagic.json, { reason: 'BadRequest', message: /expected prefix \[107 56 115 0\]/ });
  // ConfigMap{metadata{name: "x"}, field 9: "?"}: no field 9 in ConfigMap.
  const metadata = new BinaryWriter().uint32(10).string('x').finish();
  const configMap = new BinaryWriter().uint32(10).bytes(metadata).uint32(74).string('?').finish();
  const unknownField = await post('/api/v1/namespaces/team-a/configmaps', envelope('v1', 'ConfigMap', configMap));
  t.equal(unknownField.status, 400);
  t.match(unknownField.json, { message: /ConfigMap has no field 9/ });
});

t.test('a kind without definitions is a 415 that says which kinds come as protobuf', async (t) => {
  const reply = await post('/apis/apps/v1/namespaces/team-a/deployments', envelope('apps/v1', 'Deployment', new Uint8Array()));
  t.equal(reply.status, 415);
  t.match(reply.json, { reason: 'UnsupportedMediaType', message: /decodes protobuf only for v1\/Secret, .*apps\/v1 Deployment must come as JSON or YAML/ });
});

t.test("a delete's DeleteOptions as protobuf (helm uninstall sends them so) are read", async (t) => {
  api.store.put('configmaps', { metadata: { name: 'doomed', namespace: 'team-a' } });
  const options = (policy: string) => new BinaryWriter().uint32(34).string(policy).finish(); // propagationPolicy = 4
  const del = (body: Buffer) => rawRequest(api, 'DELETE', '/api/v1/namespaces/team-a/configmaps/doomed', { body: body.toString('latin1'), contentType: PROTOBUF });
  const refused = await del(envelope('v1', 'DeleteOptions', options('Sometimes')));
  t.equal(refused.status, 422, 'a propagationPolicy it does not know: the options were decoded and checked');
  t.match(refused.json, { message: /propagationPolicy: Unsupported value: "Sometimes"/ });
  const deleted = await del(envelope('v1', 'DeleteOptions', options('Background')));
  t.equal(deleted.status, 200);
  t.notOk(api.store.get('configmaps', 'team-a', 'doomed'));
});
