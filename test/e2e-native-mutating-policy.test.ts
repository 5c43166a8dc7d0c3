// `engine: native` and `engine: auto` for defaultLabels (and defaultResources) with the compiled server against the API
// double: the leader registers a MutatingAdmissionPolicy + Binding
// (admissionregistration.k8s.io/v1beta1) instead of a mutating webhook, within the rights the Helm
// chart grants for the policy; a Pod admitted through the double's chain gets the default labels
// from the double's own MutatingAdmissionPolicy plugin (CEL by @bufbuild/cel, not the server's)
// with no webhook call; a deleted or edited policy is restored (and counted), teardown removes
// both. On a double that claims 1.33 (no v1beta1 MutatingAdmissionPolicy in discovery), `auto`
// falls back to the webhook with the reason logged, and `native` fails the start with exit 2.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { ClusterHarness, NAME, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { chartRbac, metric } from './support/kube/native-e2e.js';
import { DENY_PRIVILEGED_ENTRY, policyText } from './support/policy/policy-text.js';
import { tempDir } from './support/tools/tool-runner.js';

const POLICY_NAME = `${NAME}-team-labels`;
const DEFAULTS = { team: 'platform', 'example.com/tier': 'web' };

const labelsPolicy = (engine: string): string =>
  policyText(`  - name: team-labels
    kind: defaultLabels
    engine: ${engine}
    params:
      labels: { team: platform, "example.com/tier": web }
      annotations: { contact: ops@example.com }
  - name: resources
    kind: defaultResources
    engine: ${engine}
    params:
      requests: { cpu: 100m }
      limits: { memory: 256Mi }
${DENY_PRIVILEGED_ENTRY}`);

async function writePolicy(t: { teardown(fn: () => unknown): void }, engine: string): Promise<string> {
  const path = join(await tempDir(t, 'kas-e2e-native-mutating-'), 'policy.yaml');
  await writeFile(path, labelsPolicy(engine));
  return path;
}

const mutatingPaths = (cluster: ClusterHarness): string[] =>
  (cluster.configuration<{ webhooks?: { clientConfig: { service: { path: string } } }[] }>('mutating')?.webhooks ?? []).map((w) => w.clientConfig.service.path);

t.test('engine: native: a MAP + Binding, a Pod defaulted without a webhook call, restored when deleted or edited, removed at teardown, within the chart\'s RBAC', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.setRbac(await chartRbac(labelsPolicy('native')));
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await writePolicy(t, 'native'), '--teardown', 'always']);
  const store = cluster.api.store;

  const map = store.get('mutatingadmissionpolicies', undefined, POLICY_NAME) as { metadata: { ownerReferences?: { kind: string; name: string }[] }; spec: { mutations: { patchType: string }[] } } | undefined;
  t.ok(map, 'the MutatingAdmissionPolicy is registered');
  t.match(map?.metadata.ownerReferences, [{ kind: 'ClusterRole', name: NAME }], 'owned by the install, like the configurations');
  t.match(map?.spec.mutations, [{ patchType: 'JSONPatch' }]);
  t.match(store.get('mutatingadmissionpolicybindings', undefined, POLICY_NAME), { spec: { policyName: POLICY_NAME } });
  t.same(mutatingPaths(cluster), [], 'the mutating configuration leaves the native entry out');
  t.ok(cluster.registeredValidatingPaths().some((p) => p.includes('deny-privileged')), 'the webhook entry is still registered');
  const ready = await replica.child.waitForMessage('ready');
  t.notOk((ready['webhooks'] as string[]).some((p) => p.includes('team-labels')), 'the native entry is not served');

  const caller = cluster.caller(t, () => replica.port);
  const admitPod = (labels: Record<string, string>) => caller.admit({ operation: 'CREATE', object: podFixture(labels), kind: POD_KIND, resource: POD_RESOURCE });
  const before = caller.calls.length;
  const admitted = await admitPod({ app: 'web', team: 'mine' });
  t.match(admitted, { allowed: true });
  t.same((admitted as { object?: { metadata?: { labels?: unknown; annotations?: unknown } } }).object?.metadata?.labels, { app: 'web', team: 'mine', 'example.com/tier': 'web' }, 'the missing defaults added, the user\'s value kept');
  t.same((admitted as { object?: { metadata?: { annotations?: unknown } } }).object?.metadata?.annotations, { contact: 'ops@example.com' });
  t.same(
    (admitted as { object?: { spec?: { containers?: Array<{ resources?: unknown }> } } }).object?.spec?.containers?.[0]?.resources,
    { requests: { cpu: '100m' }, limits: { memory: '256Mi' } },
    'and defaultResources\' requests and limits, by its own MutatingAdmissionPolicy',
  );
  t.ok(store.get('mutatingadmissionpolicies', undefined, `${NAME}-resources`), 'registered beside the labels one');
  t.same(caller.calls.slice(before).filter((c) => c.phase === 'mutating'), [], 'no mutating webhook call: kube-apiserver mutated it');

  t.equal(await metric(replica.healthPort, 'kube_admission_configuration_restores_total{kind="native-mutating-policy"}'), 0);
  const deletedAt = performance.now();
  store.delete('mutatingadmissionpolicies', undefined, POLICY_NAME);
  await cluster.api.waitForRequest((r) => r.verb === 'create' && r.resource === 'mutatingadmissionpolicies' && r.startedAt > deletedAt && r.status === 201, { timeoutMs: EVENT_MS });
  t.ok(store.get('mutatingadmissionpolicies', undefined, POLICY_NAME), 'the deleted policy is back');
  await replica.child.waitForMessage('native policy object restored: it was deleted');
  t.equal(await metric(replica.healthPort, 'kube_admission_configuration_restores_total{kind="native-mutating-policy"}'), 1, 'counted as a restore');

  const binding = store.get('mutatingadmissionpolicybindings', undefined, POLICY_NAME)!;
  const editedAt = performance.now();
  store.update('mutatingadmissionpolicybindings', { ...binding, spec: { ...(binding['spec'] as object), matchResources: { namespaceSelector: { matchLabels: { nowhere: 'true' } } } } });
  await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'mutatingadmissionpolicybindings' && r.startedAt > editedAt && r.status === 200, { timeoutMs: EVENT_MS });
  await replica.child.waitForMessage('native policy object restored: it was changed by someone else');
  t.equal(await metric(replica.healthPort, 'kube_admission_configuration_restores_total{kind="native-mutating-binding"}'), 1, 'the edited binding restored and counted');
  t.match(await admitPod({ app: 'again' }), { allowed: true, object: { metadata: { labels: { app: 'again', ...DEFAULTS } } } }, 'defaulted again');

  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 0, 'a clean shutdown');
  t.notOk(store.get('mutatingadmissionpolicies', undefined, POLICY_NAME), 'teardown deleted the policy');
  t.notOk(store.get('mutatingadmissionpolicybindings', undefined, POLICY_NAME), 'and the binding');
  t.same(store.list('mutatingadmissionpolicies'), [], 'and the resources one');
  const refused = cluster.api.requests.filter((r) => r.status === 403).map((r) => `${r.verb} ${r.resource}/${r.name ?? ''}`);
  t.same(refused, [], 'register, watch, restore and teardown all within the rules the chart grants for this policy');
});

t.test('engine: auto on a kube-apiserver without MutatingAdmissionPolicy v1beta1 (1.33): the webhook runs the entry, the reason logged', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.33.4' });
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await writePolicy(t, 'auto')]);
  t.match(await replica.child.waitForMessage('engine auto: the webhook runs this entry'), {
    entry: 'team-labels',
    why: /does not serve admissionregistration\.k8s\.io\/v1beta1 MutatingAdmissionPolicy \(kube-apiserver v1\.33\.4 lists no mutatingadmissionpolicies/,
  });
  t.ok(mutatingPaths(cluster).some((p) => p.includes('team-labels')), 'registered as a webhook');
  t.same(cluster.api.store.list('mutatingadmissionpolicies'), [], 'no policy written');
  const caller = cluster.caller(t, () => replica.port);
  const before = caller.calls.length;
  t.match(await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE }), { allowed: true, object: { metadata: { labels: { app: 'web', ...DEFAULTS } } } });
  t.ok(caller.calls.slice(before).some((c) => c.phase === 'mutating'), 'the webhook defaulted it');
});

t.test('engine: native on a kube-apiserver without MutatingAdmissionPolicy v1beta1: the start fails with exit 2, naming the entry and the fix', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.33.4' });
  cluster.seedDeployment(['kas-a']);
  const { child } = cluster.spawnReplica(t, 'kas-a', ['--policy-file', await writePolicy(t, 'native')]);
  t.equal((await child.exit()).code, 2);
  t.match(await child.waitForMessage('startup failed; shutting down'), { problems: [/entry team-labels: engine: native cannot run on this cluster: .*MutatingAdmissionPolicy.*v1\.33\.4.*; use engine: auto/] });
  t.same(cluster.api.store.list('mutatingwebhookconfigurations'), [], 'nothing registered');
});
