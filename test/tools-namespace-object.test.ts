// `evaluate` and `test` give a rule the Namespace kube-apiserver stores: the label
// kubernetes.io/metadata.name (the namespace registry's Canonicalize and the defaulter), the
// `kubernetes` finalizer and phase Active (PrepareForCreate), a uid, a creation time and a
// resourceVersion, whether the Namespace is given without them or not given at all. The oracle is
// the API double's own ValidatingAdmissionPolicy plugin holding the same policy, for the same
// write, in a namespace created there without labels.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { createThrough, doubleAnswer, startPolicyDouble, type PolicyDouble } from './support/policy/native-agreement.js';
import { runToolBinary, tempDir } from './support/tools/tool-runner.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./support/policy/vap-import/${name}`, import.meta.url));

/** The double, with the policy's objects created through its API and namespaces created as a user creates them. */
async function doubleWith(t: Test, policyObjects: KubeObject[], namespaces: KubeObject[]): Promise<PolicyDouble> {
  const double = await startPolicyDouble({});
  t.teardown(() => double.close());
  for (const namespace of namespaces) {
    const reply = await rawRequest(double.api, 'POST', '/api/v1/namespaces', { body: namespace });
    if (reply.status !== 201) throw new Error(`namespace ${namespace.metadata?.name}: ${reply.status} ${reply.text}`);
  }
  for (const object of policyObjects) await createThrough(double.api, object);
  return double;
}

const objectsOf = async (path: string): Promise<KubeObject[]> => parseAllDocuments(await readFile(path, 'utf8')).map((d) => d.toJSON() as KubeObject);
const namespace = (name: string, labels?: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(labels ? { labels } : {}) } });

function deployment(namespace: string, name: string, image: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image }] } } },
  };
}

/** evaluate's decision and message for each object of a run (the compiled binary). */
async function evaluated(dir: string, policy: string, objects: KubeObject[]): Promise<{ code: number; decisions: Map<string, string>; stderr: string }> {
  const file = join(dir, `objects-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, objects.map((o) => JSON.stringify(o)).join('\n---\n'));
  const run = await runToolBinary(['evaluate', '--policy-file', policy, '-f', file]);
  const decisions = new Map<string, string>();
  for (const [, what, decision] of run.stdout.matchAll(/^(\S+ \S+) \([^)]*\)\n(?: {2}.*\n)*? {2}=> (.*)$/gm)) decisions.set(what!, decision!);
  return { code: run.code, decisions, stderr: run.stderr };
}

t.test("the Kubernetes docs' namespace-environment example in a namespace given without labels: kube-apiserver's answer", async (t) => {
  const dir = await tempDir(t);
  const policy = join(dir, 'policy.yaml');
  const imported = await runToolBinary(['import', '-f', fixture('k8s-docs/image-matches-namespace-environment.yaml'), '--out', policy]);
  t.equal(imported.code, 0, imported.stderr);
  const writes = [deployment('team-a', 'prod-image', 'prod.example.com/web:1'), deployment('team-a', 'staging-image', 'staging.example.com/web:1'), deployment('team-s', 'prod-image', 'prod.example.com/web:1')];
  const double = await doubleWith(t, await objectsOf(fixture('k8s-docs/image-matches-namespace-environment.yaml')), [namespace('team-a'), namespace('team-s', { environment: 'staging' })]);
  const expected = new Map<string, string>();
  for (const write of writes) {
    const answer = await doubleAnswer(double, { label: write.metadata!.name!, operation: 'CREATE', object: write });
    expected.set(`Deployment ${write.metadata!.namespace}/${write.metadata!.name}`, answer.allowed ? 'allowed' : `DENIED: ${answer.denials[0]}`);
  }
  t.same([...expected.values()], ['allowed', 'DENIED: only prod images are allowed in namespace team-a', 'DENIED: only staging images are allowed in namespace team-s'], "the double: the default 'prod' in team-a, the label in team-s");

  const given = await evaluated(dir, policy, [namespace('team-a'), namespace('team-s', { environment: 'staging' }), ...writes]);
  const notGiven = await evaluated(dir, policy, [namespace('team-s', { environment: 'staging' }), ...writes]);
  for (const [name, run] of [['the Namespace given without labels', given], ['team-a not given', notGiven]] as const) {
    t.equal(run.code, 1, `${name}: one denial or more`);
    t.equal(run.stderr, '', name);
    for (const [object, answer] of expected) {
      const ours = run.decisions.get(object);
      t.equal(ours?.replace(/^DENIED: admission webhook "[^"]+" denied the request: /, 'DENIED: '), answer, `${name}: ${object} as the double answers`);
    }
  }
});

/** A policy that holds when namespaceObject (and a Namespace's own writes) carry what kube-apiserver's storage writes. */
const STORED_SHAPE = `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: stored-namespace.example.com }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps] }
  validations:
    - expression: "namespaceObject.metadata.labels['kubernetes.io/metadata.name'] == namespaceObject.metadata.name"
      message: no name label
    - expression: "namespaceObject.spec.finalizers == ['kubernetes'] && namespaceObject.status.phase == 'Active'"
      message: no finalizer or phase
    - expression: "has(namespaceObject.metadata.uid) && has(namespaceObject.metadata.creationTimestamp) && has(namespaceObject.metadata.resourceVersion)"
      message: no uid, creationTimestamp or resourceVersion
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: stored-namespace.example.com }
spec: { policyName: stored-namespace.example.com, validationActions: [Deny] }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: namespace-writes.example.com }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [namespaces] }
  validations:
    - expression: "object.metadata.labels['kubernetes.io/metadata.name'] == object.metadata.name && object.spec.finalizers == ['kubernetes'] && object.status.phase == 'Active' && has(object.metadata.uid)"
      message: not as the namespace registry writes it
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: namespace-writes.example.com }
spec: { policyName: namespace-writes.example.com, validationActions: [Deny] }
`;

t.test('namespaceObject, and a Namespace being created, hold what storage writes: the label, the finalizer, phase Active, uid, time, resourceVersion', async (t) => {
  const dir = await tempDir(t);
  const source = join(dir, 'vaps.yaml');
  await writeFile(source, STORED_SHAPE);
  const policy = join(dir, 'policy.yaml');
  const imported = await runToolBinary(['import', '-f', source, '--out', policy]);
  t.equal(imported.code, 0, imported.stderr);
  const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-a' }, data: { a: 'b' } };
  const double = await doubleWith(t, await objectsOf(source), [namespace('team-a')]);
  t.same((await doubleAnswer(double, { label: 'ConfigMap', operation: 'CREATE', object: configMap })).allowed, true, 'the double allows the ConfigMap');
  const created = await rawRequest(double.api, 'POST', '/api/v1/namespaces?dryRun=All', { body: namespace('team-b') });
  t.equal(created.status, 201, 'the double allows the Namespace', { reply: created.text });

  for (const [name, objects] of [['given without labels', [namespace('team-a'), configMap]], ['not given', [configMap]], ['created', [namespace('team-b')]]] as const) {
    const run = await evaluated(dir, policy, [...objects]);
    t.equal(run.code, 0, `${name}: allowed, as the double allows it`, { decisions: [...run.decisions], stderr: run.stderr });
  }
  // An UPDATE cannot change a Namespace's finalizers or status (PrepareForUpdate keeps the stored ones).
  const stored = join(dir, 'stored.yaml');
  await writeFile(stored, JSON.stringify(namespace('team-u')));
  const changed = join(dir, 'changed.yaml');
  await writeFile(changed, JSON.stringify({ ...namespace('team-u'), spec: { finalizers: [] }, status: { phase: 'Terminating' } }));
  const update = await runToolBinary(['evaluate', '--policy-file', policy, '-f', changed, '--old', stored]);
  t.equal(update.code, 0, 'an UPDATE sees the stored finalizers and status', { report: update.stdout + update.stderr });
  // A Namespace given whole, as the cluster holds it, is taken as it is (a terminating one stays so).
  const terminating = { ...namespace('team-t'), spec: { finalizers: [] }, status: { phase: 'Terminating' } };
  const run = await evaluated(dir, policy, [terminating, { ...configMap, metadata: { name: 'settings', namespace: 'team-t' } }]);
  t.equal(run.decisions.get('ConfigMap team-t/settings'), 'DENIED: admission webhook "stored-namespace-example-com" denied the request: no finalizer or phase');
});

t.test('`test`: the namespaces of a test file are the ones kube-apiserver stores', async (t) => {
  const dir = await tempDir(t);
  const policy = join(dir, 'policy.yaml');
  t.equal((await runToolBinary(['import', '-f', fixture('k8s-docs/image-matches-namespace-environment.yaml'), '--out', policy])).code, 0);
  await writeFile(join(dir, 'resources.yaml'), [deployment('team-a', 'web', 'prod.example.com/web:1'), deployment('team-a', 'other', 'dev.example.com/web:1')].map((o) => JSON.stringify(o)).join('\n---\n'));
  await writeFile(
    join(dir, 'test.yaml'),
    `apiVersion: kube-admission-server/v1
kind: PolicyTest
name: namespace environment
policy: policy.yaml
resources: [resources.yaml]
namespaces: [{ apiVersion: v1, kind: Namespace, metadata: { name: team-a } }]
results:
  - { resource: Deployment/team-a/web, webhook: image-matches-namespace-environment-example-com, decision: allowed }
  - { resource: Deployment/team-a/other, webhook: image-matches-namespace-environment-example-com, decision: denied, message: only prod images are allowed in namespace team-a }
`,
  );
  const run = await runToolBinary(['test', dir]);
  t.equal(run.code, 0, 'every expectation holds', { output: run.stdout + run.stderr });
  t.match(run.stdout, /2 passed, 0 failed/);
});
