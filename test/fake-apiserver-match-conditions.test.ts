// The double compiles the matchConditions of a webhook configuration write with the CEL
// environment of the kube-apiserver it claims to be (pkg/apis/admissionregistration/validation and
// the CEL base environment of k8s.io/apiserver): a new expression gets the libraries of the
// compatibility version (one minor below the binary), one the stored object already has gets the
// binary's; what the version cannot compile is a 422 in kube-apiserver's format. Before 1.28 the
// field itself is dropped from the write (DropDisabledFields), silently, unless already in use.
// Against the double directly: HTTP, and kubectl as a user would meet it.
import t, { type Test } from 'tap';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeApiServer, type FakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import { describeResult, kubectlMissing, runShell, shellPath } from './support/tools/kubectl.js';

const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const IP_EXPRESSION = "ip('10.0.0.1').isLoopback() == false";

type Hook = Record<string, unknown>;
const hook = (name: string, expression?: string): Hook => ({
  name,
  clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/validate' }, caBundle: 'Y2E=' },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...(expression === undefined ? {} : { matchConditions: [{ name: 'narrow', expression }] }),
});
const configuration = (webhooks: Hook[], name = 'demo') => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name }, webhooks });

async function double(t: Test, version: string): Promise<FakeApiServer> {
  const api = await startFakeApiServer({ version });
  t.teardown(() => api.close());
  return api;
}

/** `created`, or the status and message of the refusal. */
async function create(api: FakeApiServer, expression: string): Promise<string> {
  const reply = await rawRequest(api, 'POST', VWC, { body: configuration([hook('pods.policy.example.com', expression)]) });
  if (reply.status === 201) {
    await rawRequest(api, 'DELETE', `${VWC}/demo`);
    return 'created';
  }
  return `${reply.status} ${(reply.json as { message: string }).message}`;
}

const PREFIX = '422 ValidatingWebhookConfiguration.admissionregistration.k8s.io "demo" is invalid: webhooks[0].matchConditions[0].expression: Invalid value: ';

t.test('a library newer than the compatibility version: refused in a new expression, taken one release later', async (t) => {
  // ip() came with 1.30: a 1.30 kube-apiserver compiles new expressions as 1.29 does.
  t.equal(
    await create(await double(t, 'v1.30.4'), IP_EXPRESSION),
    `${PREFIX}"${IP_EXPRESSION}": compilation failed: ERROR: <input>:1:1: undeclared reference to 'ip' (in container '')\n | ${IP_EXPRESSION}\n | ^`,
  );
  t.equal(await create(await double(t, 'v1.31.0'), IP_EXPRESSION), 'created');
  t.equal(await create(await double(t, 'v1.35.2'), IP_EXPRESSION), 'created');
  // A member function of a later library, at its column: list join (strings v2, 1.29).
  t.match(await create(await double(t, 'v1.29.0'), "object.metadata.labels.map(k, k).join(',') != ''"), /undeclared reference to 'join' \(in container ''\)/);
  t.match(await create(await double(t, 'v1.28.9'), "sets.contains(['a'], ['a'])"), /1:1: undeclared reference to 'sets\.contains'/);
  t.equal(await create(await double(t, 'v1.30.0'), "sets.contains(['a'], ['a'])"), 'created');
  // Two-variable comprehensions (1.32) and optional field selection (1.28).
  t.match(await create(await double(t, 'v1.32.0'), 'object.metadata.labels.all(k, v, v != "")'), /undeclared reference to 'all'/);
  t.equal(await create(await double(t, 'v1.33.0'), 'object.metadata.labels.all(k, v, v != "")'), 'created');
  t.match(await create(await double(t, 'v1.28.0'), "object.metadata.?labels.orValue({}) == {}"), /undeclared reference to 'optional field selection'/);
  t.equal(await create(await double(t, 'v1.29.0'), "object.metadata.?labels.orValue({}) == {}"), 'created');
});

t.test('syntax errors and a result that is not a bool: refused by every version', async (t) => {
  const api = await double(t, 'v1.35.2');
  t.match(await create(api, 'object.x in [1, 2, '), new RegExp(`^${PREFIX.replace(/[.[\]]/g, '\\$&')}"object.x in \\[1, 2,": compilation failed: ERROR: <input>:1:\\d+: Syntax error: `));
  t.equal(await create(api, "'a'"), `${PREFIX}"'a'": must evaluate to bool but got string`);
  t.equal(await create(api, "object.metadata.name == 'x'"), 'created');
});

t.test('an expression the stored object already has is compiled with every library of the binary', async (t) => {
  const api = await double(t, 'v1.30.4');
  // Stored by an older writer that a 1.31 kube-apiserver let through (a rollback after an upgrade).
  api.store.put('validatingwebhookconfigurations', configuration([hook('a.policy.example.com', IP_EXPRESSION)]) as never);
  const stored = (await rawRequest(api, 'GET', `${VWC}/demo`)).json as { metadata: { resourceVersion: string } };
  const update = { ...configuration([hook('a.policy.example.com', IP_EXPRESSION), hook('b.policy.example.com', IP_EXPRESSION)]), metadata: { name: 'demo', resourceVersion: stored.metadata.resourceVersion } };
  const reply = await rawRequest(api, 'PUT', `${VWC}/demo`, { body: update });
  t.equal(reply.status, 200, 'the same expression in another webhook: a stored expression, taken');
  const fresh = await rawRequest(api, 'POST', VWC, { body: configuration([hook('c.policy.example.com', IP_EXPRESSION)], 'other') });
  t.equal(fresh.status, 422, 'in a new object it is a new expression, refused');
});

t.test('before 1.28 matchConditions are dropped from a write, unless the stored object uses them', async (t) => {
  const api = await double(t, 'v1.27.16-eks-2f008fe');
  const created = await rawRequest(api, 'POST', VWC, { body: configuration([hook('pods.policy.example.com', "object.metadata.name == 'x'")]) });
  t.equal(created.status, 201, 'no refusal');
  t.notOk((created.json as { webhooks: Hook[] }).webhooks[0]!.matchConditions, 'the webhook was stored without its conditions');
  t.notOk((api.store.get('validatingwebhookconfigurations', undefined, 'demo') as { webhooks: Hook[] }).webhooks[0]!.matchConditions);

  api.store.put('validatingwebhookconfigurations', configuration([hook('a.policy.example.com', 'true')], 'in-use') as never);
  const inUse = (await rawRequest(api, 'GET', `${VWC}/in-use`)).json as { metadata: { resourceVersion: string } };
  const update = { ...configuration([hook('a.policy.example.com', 'false')], 'in-use'), metadata: { name: 'in-use', resourceVersion: inUse.metadata.resourceVersion } };
  const updated = await rawRequest(api, 'PUT', `${VWC}/in-use`, { body: update });
  t.match(updated.json, { webhooks: [{ matchConditions: [{ name: 'narrow', expression: 'false' }] }] }, 'kept where already in use');
});

t.test('kubectl apply against a 1.30 double: the refusal as kube-apiserver words it', async (t) => {
  // kubectl is installed by `npm run setup`: without it this is a failure, never a skip.
  const missing = kubectlMissing();
  if (missing) return void t.fail(missing);
  const api = await double(t, 'v1.30.4');
  const dir = t.testdir();
  const kubeconfig = join(dir, 'kubeconfig');
  await api.writeKubeconfig(kubeconfig);
  const manifest = join(dir, 'webhook.json');
  await writeFile(manifest, JSON.stringify(configuration([hook('pods.policy.example.com', IP_EXPRESSION)])));
  const env = { PATH: shellPath(), HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
  const result = await runShell(`kubectl apply -f ${manifest}`, { cwd: repositoryRoot(), env, timeoutMs: 200_000 });
  t.not(result.code, 0, describeResult(result));
  t.match(result.stderr, /The ValidatingWebhookConfiguration "demo" is invalid: webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: .*undeclared reference to 'ip'/);
});
