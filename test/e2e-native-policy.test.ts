// `engine: native` and `engine: auto` with the compiled server against the API double: the
// leader registers a cel entry as a ValidatingAdmissionPolicy + Binding + params
// ConfigMap instead of a webhook, the double's own ValidatingAdmissionPolicy plugin (CEL by
// @bufbuild/cel, not the server's) denies a write that breaks it with no call to the webhook, a
// deleted policy is restored (and counted), and teardown removes all three. On a double that
// claims 1.29 (no ValidatingAdmissionPolicy v1 in discovery), `auto` falls back to the webhook
// with the reason logged, and `native` fails the start with exit 2.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { chartRbac, metric } from './support/kube/native-e2e.js';
import { tempDir } from './support/tools/tool-runner.js';
import { ClusterClient } from '../local-cluster/cluster/api-client.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { maxReplicasPolicy } from './support/policy/policy-text.js';

const POLICY_NAME = `${NAME}-max-replicas`;
const DEPLOYMENT_KIND = { group: 'apps', version: 'v1', kind: 'Deployment' };
const DEPLOYMENT_RESOURCE = { group: 'apps', version: 'v1', resource: 'deployments' };

const deployment = (replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team-a', labels: { app: 'web' } },
  spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } },
});

async function writePolicy(t: { teardown(fn: () => unknown): void }, engine: string): Promise<string> {
  const path = join(await tempDir(t, 'kas-e2e-native-'), 'policy.yaml');
  await writeFile(path, maxReplicasPolicy(engine));
  return path;
}

t.test('engine: native: a VAP + Binding + params ConfigMap, a denial without a webhook call, restored when deleted, removed at teardown, within the chart\'s RBAC', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.setRbac(await chartRbac(maxReplicasPolicy('native')));
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await writePolicy(t, 'native'), '--teardown', 'always']);
  const store = cluster.api.store;

  const vap = store.get('validatingadmissionpolicies', undefined, POLICY_NAME) as { metadata: { ownerReferences?: { kind: string; name: string }[] }; spec: { paramKind?: unknown } } | undefined;
  t.ok(vap, 'the ValidatingAdmissionPolicy is registered');
  t.match(vap?.metadata.ownerReferences, [{ kind: 'ClusterRole', name: NAME }], 'owned by the install, like the configurations');
  t.match(store.get('validatingadmissionpolicybindings', undefined, POLICY_NAME), { spec: { policyName: POLICY_NAME, validationActions: ['Deny'], paramRef: { name: `${POLICY_NAME}-params`, namespace: NAMESPACE } } });
  t.match(store.get('configmaps', NAMESPACE, `${POLICY_NAME}-params`), { data: { maxReplicas: '3' } });
  const paths = cluster.registeredValidatingPaths();
  t.ok(paths.length > 0 && paths.every((p) => !p.includes('max-replicas')), `the configurations leave the native entry out: ${paths.join(', ')}`);
  t.ok(paths.some((p) => p.includes('deny-privileged')), 'the webhook entry is still registered');
  const ready = await replica.child.waitForMessage('ready');
  t.notOk((ready['webhooks'] as string[]).some((p) => p.includes('max-replicas')), 'the native entry is not served');

  const caller = cluster.caller(t, () => replica.port);
  const before = caller.calls.length;
  const denied = await caller.admit({ operation: 'CREATE', object: deployment(5), kind: DEPLOYMENT_KIND, resource: DEPLOYMENT_RESOURCE });
  t.match(denied, { allowed: false, status: { code: 403, message: new RegExp(`ValidatingAdmissionPolicy '${POLICY_NAME}' with binding '${POLICY_NAME}' denied request: replicas 5 exceed 3`) } });
  t.equal(caller.calls.length, before, 'no webhook call: kube-apiserver decided it');
  t.match(await caller.admit({ operation: 'CREATE', object: deployment(2), kind: DEPLOYMENT_KIND, resource: DEPLOYMENT_RESOURCE }), { allowed: true });

  // kube-controller-manager's part (the double writes no warnings of its own): a type-checking
  // warning for the current generation, written through the status subresource.
  const controller = new ClusterClient(cluster.api, { username: 'system:kube-controller-manager', groups: ['system:masters', 'system:authenticated'] });
  const generation = (store.get('validatingadmissionpolicies', undefined, POLICY_NAME) as { metadata: { generation: number } }).metadata.generation;
  const warning = { fieldRef: 'spec.validations[0].expression', warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:14: undefined field 'replicaz'" };
  await controller.mergePatch({ resource: 'validatingadmissionpolicies', name: POLICY_NAME }, { status: { observedGeneration: generation, typeChecking: { expressionWarnings: [warning] } } }, 'status');
  t.match(await replica.child.waitForMessage('kube-apiserver type-checked the native policy with warnings: an expression may not work on the matched kinds'), { policy: POLICY_NAME, generation, warnings: [warning] });
  t.equal(await metric(replica.healthPort, `kube_admission_native_policy_type_warnings{policy="${POLICY_NAME}"}`), 1, 'counted');

  t.equal(await metric(replica.healthPort, 'kube_admission_configuration_restores_total{kind="native-policy"}'), 0);
  const deletedAt = performance.now();
  store.delete('validatingadmissionpolicies', undefined, POLICY_NAME);
  await cluster.api.waitForRequest((r) => r.verb === 'create' && r.resource === 'validatingadmissionpolicies' && r.startedAt > deletedAt && r.status === 201, { timeoutMs: EVENT_MS });
  t.ok(store.get('validatingadmissionpolicies', undefined, POLICY_NAME), 'the deleted policy is back');
  t.match(await replica.child.waitForMessage('native policy object restored: it was deleted'), { name: 'kube-admission-server', kind: 'policy', object: POLICY_NAME }, "the object's name in a field of its own, beside the logger's");
  t.equal(await metric(replica.healthPort, 'kube_admission_configuration_restores_total{kind="native-policy"}'), 1, 'counted as a restore');
  t.match(await caller.admit({ operation: 'CREATE', object: deployment(7), kind: DEPLOYMENT_KIND, resource: DEPLOYMENT_RESOURCE }), { allowed: false, status: { message: /replicas 7 exceed 3/ } });

  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 0, 'a clean shutdown');
  t.notOk(store.get('validatingadmissionpolicies', undefined, POLICY_NAME), 'teardown deleted the policy');
  t.notOk(store.get('validatingadmissionpolicybindings', undefined, POLICY_NAME), 'and the binding');
  t.notOk(store.get('configmaps', NAMESPACE, `${POLICY_NAME}-params`), 'and the params ConfigMap');
  t.notOk(cluster.configuration('validating'), 'with the configurations');
  const refused = cluster.api.requests.filter((r) => r.status === 403).map((r) => `${r.verb} ${r.resource}/${r.name ?? ''}`);
  t.same(refused, [], 'register, watch, restore and teardown all within the rules the chart grants for this policy');
});

t.test('engine: auto on a kube-apiserver without ValidatingAdmissionPolicy v1 (1.29): the webhook runs the entry, the reason logged', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.29.14' });
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await writePolicy(t, 'auto')]);
  t.match(await replica.child.waitForMessage('engine auto: the webhook runs this entry'), { entry: 'max-replicas', why: /does not serve admissionregistration\.k8s\.io\/v1 ValidatingAdmissionPolicy \(kube-apiserver v1\.29\.14 lists no validatingadmissionpolicies/ });
  t.ok(cluster.registeredValidatingPaths().some((p) => p.includes('max-replicas')), 'registered as a webhook');
  t.same(cluster.api.store.list('validatingadmissionpolicies'), [], 'no policy written');
  const caller = cluster.caller(t, () => replica.port);
  const before = caller.calls.length;
  t.match(await caller.admit({ operation: 'CREATE', object: deployment(5), kind: DEPLOYMENT_KIND, resource: DEPLOYMENT_RESOURCE }), { allowed: false, status: { message: /max-replicas: replicas 5 exceed 3/ } });
  t.ok(caller.calls.length > before, 'the webhook decided it');
});

t.test('engine: native on a kube-apiserver without ValidatingAdmissionPolicy v1: the start fails with exit 2, naming the entry and the fix', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.29.14' });
  cluster.seedDeployment(['kas-a']);
  const { child } = cluster.spawnReplica(t, 'kas-a', ['--policy-file', await writePolicy(t, 'native')]);
  t.equal((await child.exit()).code, 2);
  t.match(await child.waitForMessage('startup failed; shutting down'), { problems: [/entry max-replicas: engine: native cannot run on this cluster: .*v1\.29\.14.*; use engine: auto/] });
  t.same(cluster.api.store.list('validatingadmissionpolicies'), []);
});

t.test('engine: auto on a kube-apiserver that serves ValidatingAdmissionPolicy v1: native, out of the configurations, still served', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await writePolicy(t, 'auto')]);
  t.ok(cluster.api.store.get('validatingadmissionpolicies', undefined, POLICY_NAME), 'registered as a ValidatingAdmissionPolicy');
  const paths = cluster.registeredValidatingPaths();
  t.ok(paths.length > 0 && paths.every((p) => !p.includes('max-replicas')), `left out of the configurations: ${paths.join(', ')}`);
  const ready = await replica.child.waitForMessage('ready');
  t.ok((ready['webhooks'] as string[]).some((p) => p.includes('max-replicas')), 'still served: a leader that falls back finds every replica ready for it');
  const caller = cluster.caller(t, () => replica.port);
  const before = caller.calls.length;
  t.match(await caller.admit({ operation: 'CREATE', object: deployment(5), kind: DEPLOYMENT_KIND, resource: DEPLOYMENT_RESOURCE }), { allowed: false, status: { message: new RegExp(`ValidatingAdmissionPolicy '${POLICY_NAME}'`) } });
  t.equal(caller.calls.length, before, 'no webhook call');

  // The emergency escape, as for the configurations: the binding set to Warn by hand and marked unmanaged stays so.
  const store = cluster.api.store;
  const binding = store.get('validatingadmissionpolicybindings', undefined, POLICY_NAME)!;
  store.update('validatingadmissionpolicybindings', { ...binding, metadata: { ...binding.metadata, annotations: { 'kube-admission-server.io/unmanaged': 'true' } }, spec: { ...(binding['spec'] as object), validationActions: ['Warn'] } });
  t.match(await replica.child.waitForMessage('native policy object marked unmanaged: left alone until the annotation is removed'), { kind: 'binding', object: POLICY_NAME });
  const markedAt = performance.now();
  await cluster.api.waitForRequest((r) => r.verb === 'get' && r.resource === 'validatingadmissionpolicybindings' && r.startedAt > markedAt, { timeoutMs: EVENT_MS });
  t.match(store.get('validatingadmissionpolicybindings', undefined, POLICY_NAME), { spec: { validationActions: ['Warn'] } }, 'left as set by hand at the next pass');
  const warned = await caller.admit({ operation: 'CREATE', object: deployment(5), kind: DEPLOYMENT_KIND, resource: DEPLOYMENT_RESOURCE });
  t.match(warned, { allowed: true, warnings: [/replicas 5 exceed 3/] }, 'the write goes through with a warning');
});

t.test('a policy reload moves an entry to native and back, enforced by one engine or the other throughout', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const policyDir = join(cluster.dir, 'policy-volume');
  const volume = new AtomicWriter(policyDir);
  await volume.write({ 'policy.yaml': maxReplicasPolicy('webhook') });
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', join(policyDir, 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms' });
  const store = cluster.api.store;
  const routesEntry = (object: KubeObject | undefined) => ((object as { webhooks?: { clientConfig: { service: { path: string } } }[] } | undefined)?.webhooks ?? []).some((w) => w.clientConfig.service.path.includes('max-replicas'));
  t.ok(routesEntry(cluster.configuration('validating')), 'a webhook at first');
  const write = (verb: string, resource: string, after: number) => cluster.api.requests.find((r) => r.verb === verb && r.resource === resource && r.startedAt > after && (r.status ?? 0) < 300);

  const toNative = performance.now();
  await volume.write({ 'policy.yaml': maxReplicasPolicy('auto') });
  await store.waitFor('validatingwebhookconfigurations', undefined, NAME, (object) => object !== undefined && !routesEntry(object), { timeoutMs: EVENT_MS });
  t.ok(store.get('validatingadmissionpolicybindings', undefined, POLICY_NAME), 'native now');
  const bindingCreated = write('create', 'validatingadmissionpolicybindings', toNative);
  const entryDropped = write('update', 'validatingwebhookconfigurations', toNative);
  t.ok(bindingCreated?.endedAt !== undefined && entryDropped !== undefined && bindingCreated.endedAt <= entryDropped.startedAt, 'the binding was in place before the configuration dropped the entry');

  const toWebhook = performance.now();
  await volume.write({ 'policy.yaml': maxReplicasPolicy('webhook') });
  // Pruned last of all, after the binding and the policy.
  await store.waitFor('configmaps', NAMESPACE, `${POLICY_NAME}-params`, (object) => object === undefined, { timeoutMs: EVENT_MS });
  t.ok(routesEntry(cluster.configuration('validating')), 'a webhook again');
  t.notOk(store.get('validatingadmissionpolicybindings', undefined, POLICY_NAME), 'the binding pruned');
  t.notOk(store.get('validatingadmissionpolicies', undefined, POLICY_NAME), 'the policy pruned');
  t.notOk(store.get('configmaps', NAMESPACE, `${POLICY_NAME}-params`), 'and its params');
  const entryBack = write('update', 'validatingwebhookconfigurations', toWebhook);
  const bindingDeleted = write('delete', 'validatingadmissionpolicybindings', toWebhook);
  t.ok(entryBack?.endedAt !== undefined && bindingDeleted !== undefined && entryBack.endedAt <= bindingDeleted.startedAt, 'the configuration routed the entry again before the binding went');
  t.equal((await replica.child.stop('SIGTERM')).code, 0);
});
