// The native objects' lifecycle against the API double: created in order
// (params, policy, binding), a hand edit and a deletion restored, the unmanaged escape left
// alone, entries no longer native deleted, another install's objects untouched, teardown; a
// write denied through the registered policy by the double's own CEL.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { createWebhookAdmission } from '../local-cluster/admission-caller/index.js';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { createKubeApi, loadKubeConfig } from '../src/kube/client.js';
import { nativeObjectApis } from '../src/registration/native-policy-api.js';
import { nativePolicyObjects, type NativeInput } from '../src/registration/native-policy-objects.js';
import { deleteNativePolicies, syncNativePolicies, type NativeSyncOptions } from '../src/registration/native-policies-sync.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import { policyText } from './support/policy/policy-text.js';

const loaded = parsePolicy(
  policyText(`  - name: max-replicas
    kind: cel
    rules:
      - { operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }
    params:
      data: { maxReplicas: "3" }
    validations:
      - { expression: "object.spec.replicas <= int(params.data.maxReplicas)", message: "too many replicas" }
  - name: owner-label
    kind: cel
    rules:
      - { operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }
    validations:
      - { expression: "has(object.metadata.labels.owner)" }
`),
  'policy.yaml',
);
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const INPUT: NativeInput = { configName: 'kube-admission-server', namespace: 'admission', excludedNamespaces: ['kube-system'] };
const desired = loaded.policy.entries.map((entry) => nativePolicyObjects(entry, INPUT));

const api = await startFakeApiServer({ namespaces: ['admission', 'team-a'] });
const admission = createWebhookAdmission({ store: api.store, resolveService: () => {
  throw new Error('no webhook is registered here');
} });
api.setAdmission(admission.admission);
const dir = await mkdtemp(join(tmpdir(), 'native-sync-'));
const kubeconfig = join(dir, 'kubeconfig');
await api.writeKubeconfig(kubeconfig);
const apis = nativeObjectApis(createKubeApi(loadKubeConfig({ kubeconfig, inCluster: false })), 'admission');
const options = (): NativeSyncOptions => ({ configName: 'kube-admission-server', signal: AbortSignal.timeout(20_000), logger: pino({ level: 'silent' }) });
t.teardown(async () => {
  admission.close();
  await api.close();
  await rm(dir, { recursive: true, force: true });
});
const NAMES = { policy: 'validatingadmissionpolicies', binding: 'validatingadmissionpolicybindings' } as const;
const stored = (resource: string, name: string, namespace?: string) => api.store.get(resource, namespace, name);

t.test('registers params, policies and bindings, in that order, then nothing to do', async (t) => {
  const steps = await syncNativePolicies(apis, desired, options());
  t.same(steps.map((s) => `${s.kind} ${s.name} ${s.outcome}`), [
    'params kube-admission-server-max-replicas-params created',
    'policy kube-admission-server-max-replicas created',
    'policy kube-admission-server-owner-label created',
    'binding kube-admission-server-max-replicas created',
    'binding kube-admission-server-owner-label created',
  ]);
  t.ok(stored('configmaps', 'kube-admission-server-max-replicas-params', 'admission'));
  const again = await syncNativePolicies(apis, desired, options());
  t.ok(again.every((s) => s.outcome === 'unchanged'), 'a second pass writes nothing (the read-back compares equal)');
  const denied = await rawRequest(api, 'POST', '/apis/apps/v1/namespaces/team-a/deployments', {
    body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'big', labels: { owner: 'me' } }, spec: { replicas: 5, selector: { matchLabels: { app: 'big' } }, template: { metadata: { labels: { app: 'big' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } } },
  });
  t.equal(denied.status, 422);
  t.match((denied.json as { message: string }).message, "ValidatingAdmissionPolicy 'kube-admission-server-max-replicas' with binding 'kube-admission-server-max-replicas' denied request: too many replicas");
});

t.test('drift: an edited policy, a deleted binding and changed params are restored; unmanaged is left alone', async (t) => {
  const policy = stored(NAMES.policy, 'kube-admission-server-max-replicas')!;
  api.store.update(NAMES.policy, { ...policy, spec: { ...(policy.spec as object), failurePolicy: 'Ignore' } });
  api.store.delete(NAMES.binding, undefined, 'kube-admission-server-owner-label');
  const params = stored('configmaps', 'kube-admission-server-max-replicas-params', 'admission')!;
  api.store.update('configmaps', { ...params, data: { maxReplicas: '100' } });
  const steps = await syncNativePolicies(apis, desired, options());
  t.same(steps.filter((s) => s.outcome !== 'unchanged').map((s) => `${s.kind} ${s.name} ${s.outcome}`).sort(), [
    'binding kube-admission-server-owner-label created',
    'params kube-admission-server-max-replicas-params updated',
    'policy kube-admission-server-max-replicas updated',
  ]);
  t.equal((stored(NAMES.policy, 'kube-admission-server-max-replicas')!.spec as { failurePolicy: string }).failurePolicy, 'Fail');
  t.same(stored('configmaps', 'kube-admission-server-max-replicas-params', 'admission')!.data, { maxReplicas: '3' });
  const escaped = stored(NAMES.policy, 'kube-admission-server-owner-label')!;
  api.store.update(NAMES.policy, { ...escaped, metadata: { ...escaped.metadata, annotations: { 'kube-admission-server.io/unmanaged': 'true' } }, spec: { ...(escaped.spec as object), failurePolicy: 'Ignore' } });
  const left = await syncNativePolicies(apis, desired, options());
  t.equal(left.find((s) => s.name === 'kube-admission-server-owner-label' && s.kind === 'policy')?.outcome, 'unmanaged');
  t.equal((stored(NAMES.policy, 'kube-admission-server-owner-label')!.spec as { failurePolicy: string }).failurePolicy, 'Ignore', 'the escape holds');
});

t.test('an entry no longer native is removed; another install\'s objects are not touched; teardown removes the rest', async (t) => {
  const other = nativePolicyObjects(loaded.policy.entries[1]!, { ...INPUT, configName: 'other-install' });
  await syncNativePolicies(apis, [other], { ...options(), configName: 'other-install' });
  const steps = await syncNativePolicies(apis, desired.slice(0, 1), options());
  t.same(steps.filter((s) => s.outcome === 'deleted').map((s) => `${s.kind} ${s.name}`), ['binding kube-admission-server-owner-label'], 'the unmanaged policy stays; its binding goes');
  t.ok(stored(NAMES.policy, 'other-install-owner-label'), 'another install\'s policy stays');
  await deleteNativePolicies(apis, options());
  t.notOk(stored(NAMES.policy, 'kube-admission-server-max-replicas'));
  t.notOk(stored(NAMES.policy, 'kube-admission-server-owner-label'), 'teardown removes an unmanaged one too (scaling to zero removes everything)');
  t.notOk(stored(NAMES.binding, 'kube-admission-server-max-replicas'));
  t.notOk(stored('configmaps', 'kube-admission-server-max-replicas-params', 'admission'));
  t.ok(stored(NAMES.binding, 'other-install-owner-label'));
});
