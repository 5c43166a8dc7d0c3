// `import`: ValidatingAdmissionPolicies, bindings and params into policy-file entries, then
// evaluated here. The expected decisions are what kube-apiserver decides for the original objects
// (ValidatingAdmissionPolicy semantics: a request is judged when it matches the policy's
// matchConstraints and the binding's matchResources, once per params object the paramRef picks,
// and the binding's validationActions act on what failed), written down as facts, not read back
// from the importer.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { intersectRule, intersectRules, bothSelectors } from '../src/tools/vap-import/match-resources.js';
import { runToolBinary, runToolInProcess, tempDir } from './support/tools/tool-runner.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./support/policy/vap-import/${name}`, import.meta.url));

type Entry = Record<string, unknown> & { name: string };

async function imported(t: Test, ...files: string[]): Promise<{ path: string; entries: Entry[]; stderr: string; code: number }> {
  const dir = await tempDir(t);
  const path = join(dir, 'policy.yaml');
  const run = await runToolInProcess(['import', ...files.flatMap((f) => ['-f', fixture(f)]), '--out', path]);
  const entries = (parse(await readFile(path, 'utf8')) as { webhooks: Entry[] }).webhooks;
  return { path, entries, stderr: run.stderr, code: run.code };
}

async function evaluate(policy: string, manifests: string, ...flags: string[]): Promise<string> {
  const dir = join(policy, '..');
  const file = join(dir, `objects-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, manifests);
  const run = await runToolInProcess(['evaluate', '--policy-file', policy, '-f', file, ...flags.map((f) => f.replace('OBJECTS', file))]);
  return run.stdout;
}

const deployment = (namespace: string, name: string, replicas?: number): string => `---
apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, namespace: ${namespace} }
spec: { ${replicas === undefined ? '' : `replicas: ${replicas}, `}selector: { matchLabels: { app: x } }, template: { metadata: { labels: { app: x } }, spec: { containers: [{ name: c, image: nginx }] } } }
`;
const namespace = (name: string, labels: string): string => `---
apiVersion: v1
kind: Namespace
metadata: { name: ${name}, labels: { ${labels} } }
`;
const decisionOf = (report: string, object: string): string | undefined => new RegExp(`^${object} \\([^)]*\\)\\n(?:  .*\\n)*?  => (.*)$`, 'm').exec(report)?.[1];

t.test('a policy with its own params kind, bound by namespace: the decisions kube-apiserver makes', async (t) => {
  const { path, entries, stderr, code } = await imported(t, 'replica-limit.yaml');
  t.equal(code, 0, stderr);
  t.equal(stderr, '');
  t.equal(entries.length, 1);
  t.match(entries[0], {
    name: 'replica-limit-test-example-com',
    kind: 'cel',
    validationActions: ['Deny'],
    failurePolicy: 'Fail',
    rules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }],
    namespaceSelector: { matchLabels: { environment: 'test' } },
    params: { kind: 'ReplicaLimit', maxReplicas: 3 },
  });
  const report = await evaluate(
    path,
    namespace('team-a', 'environment: test') + namespace('team-b', 'environment: prod') + deployment('team-a', 'big', 5) + deployment('team-a', 'small', 2) + deployment('team-a', 'default') + deployment('team-b', 'big', 5),
  );
  t.match(decisionOf(report, 'Deployment team-a/big'), /^DENIED: .*replicas must be at most 3$/, '5 replicas against maxReplicas 3');
  t.equal(decisionOf(report, 'Deployment team-a/small'), 'allowed');
  t.equal(decisionOf(report, 'Deployment team-a/default'), 'allowed', 'no replicas: the variable reads 1');
  t.equal(decisionOf(report, 'Deployment team-b/big'), 'allowed', 'the binding selects environment=test only');
});

t.test('params picked by a selector: one entry per params object, each denies; a Warn+Audit binding warns', async (t) => {
  const { path, entries, stderr, code } = await imported(t, 'team-labels.yaml');
  t.equal(code, 0, stderr);
  t.same(
    entries.map((e) => e.name),
    ['required-labels-team', 'required-labels-cost-center', 'required-labels-warn'],
    'the unlabelled ConfigMap is not picked',
  );
  t.same(entries[0]!['rules'], [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'configmaps'] }], "the binding's rules within the policy's");
  t.same(entries[2]!['rules'], [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }]);
  t.same(entries[2]!['namespaceSelector'], { matchExpressions: [{ key: 'tier', operator: 'In', values: ['sandbox'] }] });
  const pod = `---
apiVersion: v1
kind: Pod
metadata: { name: bare, namespace: play }
spec: { containers: [{ name: c, image: nginx }] }
`;
  const labelled = pod.replace('name: bare,', 'name: labelled, labels: { team: a, cost-center: b },');
  const configMap = `---
apiVersion: v1
kind: ConfigMap
metadata: { name: settings, namespace: play }
`;
  const service = `---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: play }
spec: { ports: [{ port: 80 }] }
`;
  const create = await evaluate(path, namespace('play', 'tier: sandbox') + pod + labelled + configMap + service, '-v');
  t.match(decisionOf(create, 'Pod play/bare'), /^DENIED: .*the label team is required/);
  t.match(create, /required-labels-cost-center: denied: the label cost-center is required/, 'the second params object denies too');
  t.equal(decisionOf(create, 'Pod play/labelled'), 'allowed');
  t.match(decisionOf(create, 'ConfigMap play/settings'), /^DENIED: /);
  t.equal(decisionOf(create, 'Service play/web'), 'allowed', "services are in the policy's rules, not in the binding's");
  const byNode = await evaluate(path, pod, '--user', 'system:node:worker-1');
  t.equal(decisionOf(byNode, 'Pod play/bare'), 'allowed', 'the matchCondition leaves nodes out');

  const update = await evaluate(path, namespace('play', 'tier: sandbox') + pod, '--operation', 'UPDATE', '--old', 'OBJECTS');
  t.equal(decisionOf(update, 'Pod play/bare'), 'allowed', 'Warn and Audit never deny');
  t.match(update, /warning: required-labels-warn: the label team is required/);
  t.match(update, /audit annotation required-labels-warn\/validation_failure: .*"validationActions":\["Warn","Audit"\]/);
});

t.test('what one entry cannot say is named with its object and field; nothing is dropped silently', async (t) => {
  const { entries, stderr, code } = await imported(t, 'not-expressible.yaml');
  t.equal(code, 1, 'written, with problems');
  t.same(entries, []);
  const lines = stderr.trim().split('\n');
  t.match(lines, [
    /^ValidatingAdmissionPolicy\/per-namespace-quota \(.*not-expressible\.yaml document 1\): spec\.matchConditions\[0\]: reads namespaceObject.*\(not imported\)$/,
    /^ValidatingAdmissionPolicy\/per-namespace-quota \(.*\): spec\.validations\[0\]\.fieldPath: .*\(left out\)$/,
    /^ValidatingAdmissionPolicyBinding\/per-namespace-quota \(.*document 2\): spec\.paramRef\.namespace: unset with a namespaced ConfigMap: .*each request's own namespace.*\(not imported\)$/,
    /^ValidatingAdmissionPolicyBinding\/orphan \(.*document 3\): spec\.policyName: no ValidatingAdmissionPolicy not-given in the input \(not imported\)$/,
  ]);
  t.equal(lines.length, 4);
});

t.test('params the input does not hold: what the binding does in the cluster, and no entry', async (t) => {
  const text = (await readFile(fixture('replica-limit.yaml'), 'utf8')).split(/^---$/m).slice(0, 2).join('---');
  const run = await runToolBinary(['import', '-f', '-'], text);
  t.equal(run.code, 1);
  t.match(run.stderr, /ValidatingAdmissionPolicyBinding\/replica-limit-test\.example\.com \(<stdin> document 2\): spec\.paramRef\.name: ReplicaLimit test-limit is not in the input: in the cluster the binding fails every request it matches with the policy's failurePolicy \(Fail\) \(parameterNotFoundAction Deny\); give the params objects with -f \(not imported\)/);
  t.match(parse(run.stdout), { apiVersion: 'kube-admission-server/v1', kind: 'Policy', webhooks: [] });
});

t.test('a paramRef without parameterNotFoundAction: kube-apiserver refuses the binding, so nothing is imported for it', async (t) => {
  // Required in admissionregistration v1 and defaulted nowhere (zz_generated.defaults.go): the
  // API double refuses it too (test/local-cluster-admission-policies.test.ts).
  const text = (await readFile(fixture('team-labels.yaml'), 'utf8')).replace(/ {4}parameterNotFoundAction: Deny\n {4}selector:/, '    selector:');
  t.notMatch(text, /parameterNotFoundAction: Deny\n {4}selector:/, 'the selector binding lost the field');
  const run = await runToolInProcess(['import', '-f', '-'], text);
  t.equal(run.code, 1, 'written, with problems');
  t.match(run.stderr, /ValidatingAdmissionPolicyBinding\/required-labels \(<stdin> document 2\): spec\.paramRef\.parameterNotFoundAction: required \(Deny or Allow\): kube-apiserver refuses a binding whose paramRef leaves it out.*\(not imported\)/);
  t.same((parse(run.stdout) as { webhooks: Entry[] }).webhooks.map((e) => e.name), ['required-labels-warn'], 'the other binding, which sets it, is imported');
});

t.test('two policies of one name (the Kubernetes docs\' two demo-policy.example.com): a conflict naming both, and nothing bound to either', async (t) => {
  const dir = await tempDir(t);
  const out = join(dir, 'policy.yaml');
  const run = await runToolBinary(['import', '-f', fixture('k8s-docs/demo-policy-match-conditions.yaml'), '-f', fixture('k8s-docs/demo-policy-audit-annotation.yaml'), '-f', fixture('k8s-docs/demo-binding.yaml'), '--out', out]);
  t.equal(run.code, 1, 'written, with problems');
  const lines = run.stderr.trim().split('\n');
  t.match(lines, [
    /^ValidatingAdmissionPolicy\/demo-policy\.example\.com \(.*demo-policy-audit-annotation\.yaml document 1\): metadata\.name: also the name of ValidatingAdmissionPolicy\/demo-policy\.example\.com \(.*demo-policy-match-conditions\.yaml document 1\), whose spec differs: .*\(not imported\)$/,
    /^ValidatingAdmissionPolicyBinding\/demo-binding-test\.example\.com \(.*demo-binding\.yaml document 1\): spec\.policyName: names ValidatingAdmissionPolicy\/demo-policy\.example\.com \(.*match-conditions\.yaml document 1\) and ValidatingAdmissionPolicy\/demo-policy\.example\.com \(.*audit-annotation\.yaml document 1\), which differ \(not imported\)$/,
  ]);
  t.equal(lines.length, 2);
  t.same((parse(await readFile(out, 'utf8')) as { webhooks: Entry[] }).webhooks, [], 'neither policy is taken for the other');

  // The same object twice (a file given twice, or a List beside its file) is one object.
  const twice = await runToolBinary(['import', '-f', fixture('k8s-docs/demo-policy-match-conditions.yaml'), '-f', fixture('k8s-docs/demo-policy-match-conditions.yaml'), '-f', fixture('k8s-docs/demo-binding.yaml')]);
  t.equal(twice.code, 0, twice.stderr);
  t.equal(twice.stderr, '');
  t.same((parse(twice.stdout) as { webhooks: Entry[] }).webhooks.map((e) => e.name), ['demo-binding-test-example-com']);
});

t.test('params objects of one name that differ: the binding that picks them is not imported, and both are named', async (t) => {
  const text = await readFile(fixture('replica-limit.yaml'), 'utf8');
  const params = text.split(/^---$/m).find((d) => /^kind: ReplicaLimit/m.test(d))!;
  const run = await runToolInProcess(['import', '-f', '-'], `${text}\n---${params.replace('maxReplicas: 3', 'maxReplicas: 30')}`);
  t.equal(run.code, 1);
  t.match(run.stderr, /ValidatingAdmissionPolicyBinding\/replica-limit-test\.example\.com \(<stdin> document 2\): spec\.paramRef\.name: ReplicaLimit\/test-limit \(<stdin> document 3\) and ReplicaLimit\/test-limit \(<stdin> document 4\) are one object of the cluster given twice with different contents.*\(not imported\)/);
  t.same((parse(run.stdout) as { webhooks: Entry[] }).webhooks, []);
});

t.test('an entry reported not imported is not written: the file holds the others, and it loads', async (t) => {
  const dir = await tempDir(t);
  // The docs' demo policy with a validation that does not compile (startWith is no CEL function).
  const broken = join(dir, 'broken.yaml');
  await writeFile(broken, (await readFile(fixture('k8s-docs/demo-policy-match-conditions.yaml'), 'utf8')).replace("!object.metadata.name.contains('demo')", "object.metadata.name.startWith('demo')"));
  const out = join(dir, 'policy.yaml');
  const run = await runToolBinary(['import', '-f', broken, '-f', fixture('k8s-docs/demo-binding.yaml'), '-f', fixture('k8s-docs/image-matches-namespace-environment.yaml'), '--out', out]);
  t.equal(run.code, 1, 'written, with problems');
  const lines = run.stderr.trim().split('\n');
  t.match(lines, [/^ValidatingAdmissionPolicy\/demo-policy\.example\.com \(.*broken\.yaml document 1\): spec\.validations\[0\]\.expression: does not load here \(.*binding demo-binding-test\.example\.com\): CEL expression does not compile: .*startWith.*\(not imported\)$/]);
  t.equal(lines.length, 1);
  const written = (parse(await readFile(out, 'utf8')) as { webhooks: Entry[] }).webhooks;
  t.same(written.map((e) => e.name), ['image-matches-namespace-environment-example-com'], 'what is not imported is not written');
  const objects = join(dir, 'objects.yaml');
  await writeFile(objects, namespace('team-a', 'environment: prod') + deployment('team-a', 'web', 2).replace('namespace: team-a }', 'namespace: team-a, labels: { app: web } }'));
  const evaluated = await runToolBinary(['evaluate', '--policy-file', out, '-f', objects]);
  t.equal(evaluated.code, 0, `the written file loads: ${evaluated.stderr}`);
});

interface LibraryCase {
  name: string;
  operation: 'CREATE' | 'UPDATE';
  violations: boolean;
  object: Record<string, unknown>;
}

/** The gatekeeper-library's own cases for each fixture (its suite.yaml): the oracle is Gatekeeper's verdict. */
const libraryCases = async (): Promise<Array<{ fixture: string; cases: LibraryCase[] }>> => parse(await readFile(fixture('gatekeeper/library-cases.yaml'), 'utf8'));

t.test("Gatekeeper's policies for the library's templates import (the matchConditions on the constraint guard the validations) and decide the library's cases as Gatekeeper does", async (t) => {
  const dir = await tempDir(t);
  for (const { fixture: name, cases } of (await libraryCases()).filter((c) => c.fixture !== 'privileged-containers.yaml')) {
    const out = join(dir, `${name}.policy.yaml`);
    const run = await runToolBinary(['import', '-f', fixture(`gatekeeper/${name}`), '--out', out]);
    t.equal(run.code, 0, `${name}: imported whole`);
    t.equal(run.stderr, '', `${name}: nothing left out`);
    const [entry] = (parse(await readFile(out, 'utf8')) as { webhooks: Entry[] }).webhooks;
    const conditions = (entry?.['matchConditions'] ?? []) as Array<{ name: string }>;
    t.same(conditions.map((c) => c.name), ['gatekeeper_internal_match_global_exempted_namespaces'], `${name}: the condition on the object alone stays a matchCondition`);
    const variables = (entry?.['variables'] ?? []) as Array<{ name: string; expression: string }>;
    t.match(variables.at(-1), { name: 'matchConditions', expression: /^\(\s*!has\(params\.spec\)[\s\S]*\) && \([\s\S]*\) && \([\s\S]*\) && \([\s\S]*params\.spec\.match\.kinds[\s\S]*\)$/ }, `${name}: the four on the constraint, one guard`);
    for (const validation of (entry?.['validations'] ?? []) as Array<{ expression: string }>) t.match(validation.expression, /^variables\.matchConditions \? \(/, `${name}: each validation guarded`);
    for (const c of cases) {
      const objects = join(dir, `${name}-${c.name}.yaml`);
      await writeFile(objects, JSON.stringify(c.object));
      const evaluated = await runToolInProcess(['evaluate', '--policy-file', out, '-f', objects, ...(c.operation === 'UPDATE' ? ['--old', objects] : [])]);
      t.equal(evaluated.code, c.violations ? 1 : 0, `${name} ${c.name} (${c.operation}): ${c.violations ? 'denied' : 'allowed'}, as Gatekeeper says`, { report: evaluated.stdout + evaluated.stderr });
    }
  }
});

t.test("a Gatekeeper template whose CEL this server refuses is named, not imported, and not written; the others are", async (t) => {
  const dir = await tempDir(t);
  const out = join(dir, 'policy.yaml');
  const run = await runToolBinary(['import', '-f', fixture('gatekeeper/privileged-containers.yaml'), '-f', fixture('gatekeeper/host-namespaces.yaml'), '--out', out]);
  t.equal(run.code, 1, 'written, with problems');
  const lines = run.stderr.trim().split('\n');
  // The library's privileged-containers template looks up each container's image in a list made
  // from the same request's containers: two loops over the request, refused here at load.
  t.match(lines, [/^ValidatingAdmissionPolicy\/gatekeeper-k8spspprivilegedcontainer \(.*privileged-containers\.yaml document 1\): spec\.variables\[8\]\.expression: does not load here \(.*\): CEL expression has a worst-case cost that grows with the square of the object's size: .*\(not imported\)$/]);
  t.equal(lines.length, 1);
  const written = (parse(await readFile(out, 'utf8')) as { webhooks: Entry[] }).webhooks;
  t.same(written.map((e) => e.name), ['gatekeeper-k8spsphostnamespace-psp-host-namespace']);
  const pod = join(dir, 'pod.yaml');
  await writeFile(pod, 'apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec: { hostPID: true, containers: [{ name: c, image: nginx, securityContext: { privileged: true } }] }\n');
  const evaluated = await runToolBinary(['evaluate', '--policy-file', out, '-f', pod]);
  t.equal(evaluated.code, 1, 'the written file loads and its entry denies');
  t.match(evaluated.stdout, /Sharing the host namespace is not allowed: p/);
});

t.test('bad input: nothing to import is exit 2; admission policy objects it does not read are named', async (t) => {
  const none = await runToolInProcess(['import', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n');
  t.equal(none.code, 2);
  t.match(none.stderr, /import: no ValidatingAdmissionPolicy or binding in -/);
  const mutating = await runToolInProcess(
    ['import', '-f', '-'],
    `${await readFile(fixture('replica-limit.yaml'), 'utf8')}\n---\napiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicy\nmetadata: { name: defaults }\nspec: {}\n`,
  );
  t.equal(mutating.code, 1);
  t.match(mutating.stderr, /MutatingAdmissionPolicy\/defaults \(<stdin> document 4\): apiVersion: admissionregistration\.k8s\.io\/v1beta1 MutatingAdmissionPolicy is not read by this import/);
  t.equal(parse(mutating.stdout).webhooks.length, 1, 'the rest is imported');
  const noFiles = await runToolInProcess(['import']);
  t.equal(noFiles.code, 2);
  t.match(noFiles.stderr, /give the policies with -f/);
});

t.test('matching both the policy and its binding: rule intersections', async (t) => {
  const pods = { operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] };
  t.same(intersectRule(pods, { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }), pods, 'stars narrow nothing');
  t.same(intersectRule(pods, { ...pods, operations: ['DELETE'] }), undefined, 'no common operation');
  t.same(intersectRule({ ...pods, resources: ['pods/*'] }, { ...pods, resources: ['*/status'] }), { ...pods, resources: ['pods/status'] });
  t.same(intersectRule({ ...pods, resources: ['*'] }, { ...pods, resources: ['pods/status'] }), undefined, 'a star alone is no subresource');
  t.same(intersectRule({ ...pods, scope: 'Namespaced' }, { ...pods, scope: 'Cluster' }), undefined);
  t.same(intersectRule({ ...pods, resourceNames: ['a', 'b'] }, { ...pods, resourceNames: ['b', 'c'] }), { ...pods, resourceNames: ['b'] });
  t.same(intersectRules([pods], []), [pods], 'a binding without rules narrows nothing');
  t.same(bothSelectors({ matchLabels: { a: '1' } }, { matchLabels: { a: '2' } }), { matchLabels: { a: '1' }, matchExpressions: [{ key: 'a', operator: 'In', values: ['2'] }] }, 'both must hold, even when they cannot');
});
