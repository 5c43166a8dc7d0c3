// evaluate and test build every request shape kube-apiserver sends (local-cluster/CONTRACT.md 1.2): CREATE, UPDATE,
// DELETE (only oldObject) and CONNECT (the connect options as object), dry runs, any user, and
// subresources, each matched against the rules the way kube-apiserver matches them.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { runToolBinary, runToolInProcess, tempDir } from './support/tools/tool-runner.js';

const POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: keep-protected
    kind: cel
    rules: [{ operations: [DELETE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
    validations:
      - expression: "object == null && !('protected' in oldObject.metadata.labels)"
        messageExpression: "'configmap ' + oldObject.metadata.name + ' is protected'"
  - name: exec-admins
    kind: cel
    rules: [{ operations: [CONNECT], apiGroups: [""], apiVersions: [v1], resources: [pods/exec] }]
    validations:
      - expression: "object.kind == 'PodExecOptions' && oldObject == null && request.kind.kind == 'PodExecOptions' && request.subResource == 'exec' && request.name == 'web'"
        message: not an exec request as kube-apiserver sends it
      - expression: "'ops' in request.userInfo.groups && 'system:authenticated' in request.userInfo.groups"
        messageExpression: "request.userInfo.username + ' may not exec into pods'"
  - name: no-dry-run
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
    validations:
      - expression: "!request.dryRun && !has(request.options.dryRun)"
        message: dry run seen
  - name: status-writers
    kind: cel
    rules: [{ operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods/status] }]
    validations:
      - expression: "request.userInfo.username.startsWith('system:node:') && oldObject.status.phase == 'Pending'"
        message: only kubelets write pod status
  - name: pods-only
    kind: cel
    rules: [{ operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations: [{ expression: "false", message: called for the pod itself }]
`;

const CONFIGMAPS = `apiVersion: v1
kind: ConfigMap
metadata: { name: settings, namespace: shop, labels: { protected: "yes" } }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: scratch, namespace: shop, labels: {} }
`;
const POD = `apiVersion: v1
kind: Pod
metadata: { name: web, namespace: shop }
spec: { containers: [{ name: web, image: nginx }] }
status: { phase: Running }
`;

async function setUp(t: Test): Promise<{ dir: string; evaluate: (...argv: string[]) => ReturnType<typeof runToolInProcess> }> {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  await writeFile(join(dir, 'configmaps.yaml'), CONFIGMAPS);
  await writeFile(join(dir, 'pod.yaml'), POD);
  await writeFile(join(dir, 'pending-pod.yaml'), POD.replace('Running', 'Pending'));
  return { dir, evaluate: (...argv) => runToolInProcess(['evaluate', '--policy-file', join(dir, 'policy.yaml'), '-v', ...argv]) };
}

interface Report {
  objects: { operation: string; allowed: boolean; dryRun: boolean; subResource?: string; webhooks: { webhook: string; decision: string; message?: string; why?: string }[] }[];
}

function decisions(run: { stdout: string }): Record<string, string>[] {
  return (JSON.parse(run.stdout) as Report).objects.map((o) => Object.fromEntries(o.webhooks.map((w) => [w.webhook, w.decision + (w.message ? `: ${w.message}` : '')])));
}

t.test('--operation DELETE: the stored object arrives as oldObject, object is null, DeleteOptions', async (t) => {
  const { dir, evaluate } = await setUp(t);
  const run = await evaluate('-f', join(dir, 'configmaps.yaml'), '--operation', 'DELETE', '-o', 'json');
  t.equal(run.code, 1, run.stderr);
  const [settings, scratch] = decisions(run);
  t.equal(settings!['keep-protected'], 'denied: configmap settings is protected');
  t.equal(scratch!['keep-protected'], 'allowed');
  t.equal(settings!['no-dry-run'], 'skipped', 'a CREATE rule is not called for a DELETE');
  const text = await evaluate('-f', join(dir, 'configmaps.yaml'), '--operation', 'DELETE');
  t.match(text.stdout, 'ConfigMap shop/settings (DELETE, ');
});

t.test('--operation CONNECT --subresource exec: the PodExecOptions as object, the user and groups as given', async (t) => {
  const { dir, evaluate } = await setUp(t);
  const denied = await evaluate('-f', join(dir, 'pod.yaml'), '--operation', 'CONNECT', '--subresource', 'exec', '--user', 'alice', '-o', 'json');
  t.equal(denied.code, 1, denied.stderr);
  t.same(decisions(denied), [{ 'exec-admins': 'denied: alice may not exec into pods', 'pods-only': 'skipped', 'keep-protected': 'skipped', 'no-dry-run': 'skipped', 'status-writers': 'skipped' }]);
  const allowed = await evaluate('-f', join(dir, 'pod.yaml'), '--operation', 'CONNECT', '--subresource', 'exec', '--user', 'bob', '--group', 'ops');
  t.equal(allowed.code, 0, allowed.stdout);
  t.match(allowed.stdout, 'Pod shop/web (CONNECT pods/exec, ');
});

t.test('--dry-run: request.dryRun and options.dryRun as kubectl --dry-run=server sends them', async (t) => {
  const { dir, evaluate } = await setUp(t);
  const plain = await evaluate('-f', join(dir, 'configmaps.yaml'), '-o', 'json');
  t.equal(plain.code, 0, plain.stdout);
  const dry = await evaluate('-f', join(dir, 'configmaps.yaml'), '--dry-run', '-o', 'json');
  t.equal(dry.code, 1);
  t.same(decisions(dry).map((d) => d['no-dry-run']), ['denied: dry run seen', 'denied: dry run seen']);
  t.ok((JSON.parse(dry.stdout) as Report).objects.every((o) => o.dryRun));
});

t.test('--subresource status on an UPDATE reaches only rules for pods/status', async (t) => {
  const { dir, evaluate } = await setUp(t);
  const asKubelet = await evaluate('-f', join(dir, 'pod.yaml'), '--old', join(dir, 'pending-pod.yaml'), '--subresource', 'status', '--user', 'system:node:n1', '--group', 'system:nodes', '-o', 'json');
  t.equal(asKubelet.code, 0, asKubelet.stdout);
  t.same(decisions(asKubelet), [{ 'status-writers': 'allowed', 'pods-only': 'skipped', 'keep-protected': 'skipped', 'no-dry-run': 'skipped', 'exec-admins': 'skipped' }]);
  const asAdmin = await evaluate('-f', join(dir, 'pod.yaml'), '--old', join(dir, 'pending-pod.yaml'), '--subresource', 'status');
  t.equal(asAdmin.code, 1);
  t.match(asAdmin.stdout, 'Pod shop/web (UPDATE pods/status, ');
  t.match(asAdmin.stdout, /status-writers: denied: only kubelets write pod status/);
  const whole = await evaluate('-f', join(dir, 'pod.yaml'), '--old', join(dir, 'pending-pod.yaml'));
  t.match(whole.stdout, /pods-only: denied/, 'without the subresource, the rule for pods runs');
});

t.test('request shapes kube-apiserver never sends are bad input (exit 2) that names the flag or the object', async (t) => {
  const { dir, evaluate } = await setUp(t);
  const pod = join(dir, 'pod.yaml');
  const cases: [string[], RegExp][] = [
    [['-f', pod, '--operation', 'PATCH'], /--operation: "PATCH" is not an operation; use one of CREATE, UPDATE, DELETE, CONNECT/],
    [['-f', pod, '--subresource', 'Exec'], /--subresource: "Exec" is not a subresource name/],
    [['-f', pod, '--user', ''], /--user: needs a value|--user: "" is not a user/],
    [['-f', pod, '--operation', 'UPDATE'], /Pod shop\/web: an UPDATE needs the stored version \(evaluate --old FILE/],
    [['-f', pod, '--subresource', 'exec'], /Pod shop\/web: pods\/exec takes only CONNECT, not CREATE/],
    [['-f', pod, '--operation', 'CONNECT'], /CONNECT goes to a connect subresource \(pods\/exec, .*\); pods is none/],
    [['-f', pod, '--subresource', 'status'], /pods\/status takes only UPDATE, not CREATE/],
    [['-f', pod, '--subresource', 'scale', '--operation', 'UPDATE', '--old', pod], /subresource "scale" is not supported/],
  ];
  for (const [argv, message] of cases) {
    const run = await evaluate(...argv);
    t.equal(run.code, 2, argv.join(' '));
    t.match(run.stderr, message, argv.join(' '));
  }
});

t.test('a test file sets the same shape with `request`; a wrong one is bad input naming the field', async (t) => {
  const { dir } = await setUp(t);
  const testFile = (request: string, results: string) => `apiVersion: kube-admission-server/v1
kind: PolicyTest
name: shapes
policy: policy.yaml
resources: [pod.yaml]
request: ${request}
results: ${results}
`;
  await writeFile(
    join(dir, 'shapes-test.yaml'),
    testFile(
      '{ operation: CONNECT, subResource: exec, userInfo: { username: carol, groups: [ops] }, dryRun: false }',
      '[{ resource: Pod/shop/web, webhook: exec-admins, decision: allowed }, { resource: Pod/shop/web, webhook: pods-only, decision: skipped }]',
    ),
  );
  const passed = await runToolInProcess(['test', dir]);
  t.equal(passed.code, 0, passed.stdout + passed.stderr);
  t.match(passed.stdout, /^2 passed, 0 failed$/m);

  await writeFile(join(dir, 'shapes-test.yaml'), testFile('{ operation: CONNECT, subResource: exec, userInfo: { username: carol } }', '[{ resource: Pod/shop/web, webhook: exec-admins, decision: allowed }]'));
  const failed = await runToolInProcess(['test', dir]);
  t.equal(failed.code, 1);
  t.match(failed.stdout, /expected allowed, got denied: carol may not exec into pods/);

  for (const [request, message] of [
    ['{ operation: PATCH }', /shapes-test\.yaml: request\.operation: "PATCH" is not an operation/],
    ['{ verb: CREATE }', /shapes-test\.yaml: request: unknown field "verb"; valid fields: operation, dryRun, userInfo, subResource/],
    ['{ dryRun: "yes" }', /request\.dryRun must be true or false/],
    ['{ userInfo: { groups: [""] } }', /request\.userInfo\.groups\[0\]: "" is not a user or group name/],
  ] as const) {
    await writeFile(join(dir, 'shapes-test.yaml'), testFile(request, '[{ resource: Pod/shop/web, webhook: exec-admins, decision: allowed }]'));
    const bad = await runToolInProcess(['test', dir]);
    t.equal(bad.code, 2, request);
    t.match(bad.stderr, message, request);
  }
});

t.test('a large report piped to another program arrives whole (the binary waits for stdout to drain before it exits)', async (t) => {
  const pods = Array.from({ length: 1500 }, (_, i) => `apiVersion: v1\nkind: Pod\nmetadata: { name: p-${i}, namespace: shop }\nspec: { containers: [{ name: c, image: nginx }] }\n`);
  const run = await runToolBinary(['evaluate', '-f', '-', '-o', 'json'], pods.join('---\n'));
  t.equal(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout) as { objects: unknown[] };
  t.equal(report.objects.length, 1500, `all ${run.stdout.length} bytes`);
});
