// `render` prints the native objects beside the configurations: a cel entry
// with engine native (or auto, where the target kube-apiserver serves ValidatingAdmissionPolicy
// v1) becomes a params ConfigMap, a ValidatingAdmissionPolicy and its Binding, which the API
// double's copy of kube-apiserver's validation accepts, and is left out of the configurations;
// an auto entry that falls back says why in a comment heading the output; native for a target
// without the API is exit 2.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import {
  validateAdmissionPolicy,
  validateAdmissionPolicyBinding,
  validateMutatingAdmissionPolicy,
  validateMutatingAdmissionPolicyBinding,
} from '../local-cluster/fake-apiserver/policy-validation.js';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { ChildServer } from './support/server/child-server.js';
import { tempDir } from './support/tools/tool-runner.js';
import { DENY_PRIVILEGED_ENTRY, maxReplicasPolicy, policyText } from './support/policy/policy-text.js';
import { startInProcessKube } from './support/kube/in-process-kube.js';

async function render(t: Test, engine: string, extra: string[] = [], text = maxReplicasPolicy(engine)): Promise<ChildServer & { exitCode: number | null }> {
  const dir = await tempDir(t, 'kas-render-native-');
  const policy = join(dir, 'policy.yaml');
  await writeFile(policy, text);
  const child = new ChildServer(['render', '--cert-dir', join(dir, 'certs'), '--policy-file', policy, '--namespace', 'kas', ...extra]);
  const { code } = await child.exit();
  return Object.assign(child, { exitCode: code });
}

type Doc = KubeObject & { webhooks?: { clientConfig: { service: { path: string } } }[] };
const paths = (docs: Doc[]) => docs.filter((d) => d.kind === 'ValidatingWebhookConfiguration').flatMap((d) => (d.webhooks ?? []).map((w) => w.clientConfig.service.path));

t.test('engine native: the ConfigMap, policy and binding beside the configurations, which leave the entry out', async (t) => {
  const child = await render(t, 'native');
  t.equal(child.exitCode, 0, child.stderr);
  t.match(child.stdout, /^# engine native: entry max-replicas runs inside kube-apiserver/);
  const docs = parseAllDocuments(child.stdout).map((d) => d.toJS() as Doc);
  t.same(docs.map((d) => d.kind), ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'ConfigMap', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
  t.same(paths(docs), ['/validate/validating-fail-t5/deny-privileged']);
  const [, , params, policy, binding] = docs;
  t.match(params, { metadata: { name: 'kube-admission-server-max-replicas-params', namespace: 'kas' }, data: { maxReplicas: '3' } });
  t.same(validateAdmissionPolicy(policy!), [], 'kube-apiserver takes the policy');
  t.same(validateAdmissionPolicyBinding(binding!), [], 'and the binding');
  t.match(binding, { spec: { policyName: 'kube-admission-server-max-replicas', paramRef: { name: 'kube-admission-server-max-replicas-params', namespace: 'kas' } } });
});

t.test('engine auto for a 1.29 target: the webhook runs it, and the output says why', async (t) => {
  const child = await render(t, 'auto', ['--kubernetes-version', '1.29']);
  t.equal(child.exitCode, 0, child.stderr);
  t.match(child.stdout, /^# engine auto: entry max-replicas runs in the webhook: the cluster does not serve admissionregistration\.k8s\.io\/v1 ValidatingAdmissionPolicy \(Kubernetes 1\.29 has no ValidatingAdmissionPolicy v1; it is GA since 1\.30\)\n/);
  const docs = parseAllDocuments(child.stdout).map((d) => d.toJS() as Doc);
  t.same(docs.map((d) => d.kind), ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
  t.same(paths(docs), ['/validate/validating-fail-t5/max-replicas.deny-privileged']);
});

t.test('engine native for a 1.29 target: exit 2, naming the entry and the fix', async (t) => {
  const child = await render(t, 'native', ['--kubernetes-version', '1.29']);
  t.equal(child.exitCode, 2);
  t.match(child.stderr, /entry max-replicas: engine: native cannot run on this cluster: .*1\.29.*; use engine: auto/);
  t.equal(child.stdout, '');
});

t.test('with a cluster: what kube-apiserver said of each native policy registered there heads the output', async (t) => {
  const { api } = await startInProcessKube(t, 'kas');
  const kubeconfig = join(await tempDir(t, 'kas-render-native-kube-'), 'kubeconfig');
  await api.writeKubeconfig(kubeconfig, { namespace: 'kas' });
  const withCluster = async (): Promise<string> => {
    const child = await render(t, 'native', ['--kubeconfig', kubeconfig]);
    t.equal(child.exitCode, 0, child.stderr);
    return child.stdout;
  };
  const first = await withCluster();
  t.match(first, /^# ValidatingAdmissionPolicy kube-admission-server-max-replicas: not in the cluster yet \(the leader creates it\)$/m);

  // Registered as the leader would, then type-checked by kube-controller-manager with a warning.
  const rendered = parseAllDocuments(first).map((d) => d.toJS() as Doc).find((d) => d.kind === 'ValidatingAdmissionPolicy')!;
  const stored = api.store.create('validatingadmissionpolicies', rendered);
  const generation = (stored.metadata as { generation: number }).generation;
  t.match(await withCluster(), new RegExp(`^# ValidatingAdmissionPolicy kube-admission-server-max-replicas: generation ${generation} not type-checked by kube-apiserver yet$`, 'm'));
  const warning = { fieldRef: 'spec.validations[0].expression', warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:14: undefined field 'replicaz'\n | object.spec.replicaz <= 3\n | .............^" };
  api.store.update('validatingadmissionpolicies', { ...stored, status: { observedGeneration: generation, typeChecking: { expressionWarnings: [warning] }, conditions: [{ type: 'TypeChecked', status: 'False', reason: 'Warnings', message: 'see typeChecking' }] } });
  t.match(
    await withCluster(),
    new RegExp(
      `^# ValidatingAdmissionPolicy kube-admission-server-max-replicas: type-checked by kube-apiserver \\(generation ${generation}\\): 1 warning: spec\\.validations\\[0\\]\\.expression: apps/v1, Kind=Deployment: ERROR: <input>:1:14: undefined field 'replicaz' \\| object\\.spec\\.replicaz <= 3 \\| \\.+\\^; condition TypeChecked=False \\(Warnings\\): see typeChecking$`,
      'm',
    ),
    'the warning on one comment line, with the failing condition',
  );
});

const labelsPolicy = (engine: string): string =>
  policyText(`  - name: team-labels
    kind: defaultLabels
    engine: ${engine}
    params:
      labels: { team: platform }
${DENY_PRIVILEGED_ENTRY}`);

t.test('defaultLabels with engine native: a MutatingAdmissionPolicy and its Binding beside the configurations, with and without a cluster', async (t) => {
  const offline = await render(t, 'native', [], labelsPolicy('native'));
  t.equal(offline.exitCode, 0, offline.stderr);
  t.match(offline.stdout, /^# engine native: entry team-labels runs inside kube-apiserver \(MutatingAdmissionPolicy and Binding below\)\n/);
  const docs = parseAllDocuments(offline.stdout).map((d) => d.toJS() as Doc);
  t.same(docs.map((d) => d.kind), ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding']);
  t.same(docs[0]?.webhooks ?? [], [], 'the mutating configuration leaves the entry out');
  const [, , policy, binding] = docs;
  t.equal(policy?.apiVersion, 'admissionregistration.k8s.io/v1beta1');
  t.same(validateMutatingAdmissionPolicy(policy!), [], 'kube-apiserver takes the policy');
  t.same(validateMutatingAdmissionPolicyBinding(binding!), [], 'and the binding');

  const old = await render(t, 'auto', ['--kubernetes-version', '1.33'], labelsPolicy('auto'));
  t.equal(old.exitCode, 0, old.stderr);
  t.match(old.stdout, /^# engine auto: entry team-labels runs in the webhook: the cluster does not serve admissionregistration\.k8s\.io\/v1beta1 MutatingAdmissionPolicy \(Kubernetes 1\.33 has no MutatingAdmissionPolicy v1beta1; it is beta since 1\.34\)\n/);
  t.same(parseAllDocuments(old.stdout).map((d) => (d.toJS() as Doc).kind), ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);

  const { api } = await startInProcessKube(t, 'kas');
  const kubeconfig = join(await tempDir(t, 'kas-render-native-kube-'), 'kubeconfig');
  await api.writeKubeconfig(kubeconfig, { namespace: 'kas' });
  const withCluster = await render(t, 'auto', ['--kubeconfig', kubeconfig], labelsPolicy('auto'));
  t.equal(withCluster.exitCode, 0, withCluster.stderr);
  t.match(withCluster.stdout, /^# engine auto: entry team-labels runs inside kube-apiserver \(MutatingAdmissionPolicy and Binding below\)\n(?!#)/, 'discovery lists the API; a MAP has no type-checking status to report');
  t.ok(parseAllDocuments(withCluster.stdout).some((d) => (d.toJS() as Doc).kind === 'MutatingAdmissionPolicy'));
});
