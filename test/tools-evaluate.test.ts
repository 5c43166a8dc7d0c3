import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { runToolBinary, runToolInProcess, tempDir } from './support/tools/tool-runner.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE = join(ROOT, 'policies', 'example.yaml');

const PRIVILEGED = `apiVersion: v1
kind: Pod
metadata: { name: root-shell, namespace: team-a, labels: { app: debug } }
spec:
  containers: [{ name: shell, image: registry.k8s.io/busybox, securityContext: { privileged: true } }]
`;
const PLAIN = `apiVersion: v1
kind: Pod
metadata: { name: web, namespace: team-a, labels: { app: web } }
spec:
  containers: [{ name: web, image: registry.k8s.io/pause:3.10 }]
`;

t.test('the binary reads a multi-document stream from stdin (kubectl kustomize | evaluate -f -) and exits 1 on a denial', async (t) => {
  const run = await runToolBinary(['evaluate', '-f', '-', '--policy-file', EXAMPLE], `${PLAIN}---\n${PRIVILEGED}`);
  t.equal(run.code, 1, run.stderr);
  t.match(run.stdout, 'Pod team-a/web (CREATE, <stdin> document 1)');
  t.match(run.stdout, /validating deny-privileged: denied: container "shell" sets securityContext.privileged: true/);
  t.match(run.stdout, '=> DENIED: admission webhook "deny-privileged" denied the request');
  t.match(run.stdout, /mutating +default-labels: allowed \(patched\)/);
  t.match(run.stdout, /\+ {5}kube-admission-server\/defaulted: "true"/, 'the patch as a diff of the object');
  t.match(run.stdout, '2 object(s): 1 allowed, 1 denied');
  const allowed = await runToolBinary(['evaluate', '-f', '-', '--policy-file', EXAMPLE], PLAIN);
  t.equal(allowed.code, 0, 'nothing denied: exit 0');
});

t.test('--output json: per object and webhook, the decision, messages, warnings, audit annotations and the patch', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'pod.yaml');
  await writeFile(file, PRIVILEGED.replace('registry.k8s.io/busybox', 'quay.io/x/busybox'));
  const run = await runToolInProcess(['evaluate', '-f', file, '--policy-file', EXAMPLE, '-o', 'json']);
  t.equal(run.code, 1);
  const report = JSON.parse(run.stdout) as { allowed: boolean; objects: { webhooks: Record<string, unknown>[]; denial: unknown; object: { metadata: { labels: Record<string, string> } } }[] };
  t.equal(report.allowed, false);
  const [object] = report.objects;
  const byName = new Map(object!.webhooks.map((w) => [w['webhook'], w]));
  t.match(byName.get('default-labels'), { decision: 'allowed', patch: [{ op: 'add', path: '/metadata/labels/kube-admission-server~1defaulted', value: 'true' }] });
  t.match(byName.get('deny-privileged'), { decision: 'denied', code: 403, message: /privileged/ });
  t.match(byName.get('allowed-registries'), { decision: 'allowed', auditAnnotations: { 'policy-violation': /quay.io\/x\/busybox/ } });
  t.match(object!.denial, { webhook: 'deny-privileged', code: 403 });
  t.equal(object!.object.metadata.labels['kube-admission-server/defaulted'], 'true', 'the object as mutated');
});

t.test('--old makes it an UPDATE: built-in rules only count what the old version did not already have', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'new.yaml'), PRIVILEGED);
  await writeFile(join(dir, 'old.yaml'), PRIVILEGED);
  const run = await runToolInProcess(['evaluate', '-f', join(dir, 'new.yaml'), '--old', join(dir, 'old.yaml'), '--policy-file', EXAMPLE]);
  t.equal(run.code, 0, run.stdout);
  t.match(run.stdout, 'Pod team-a/root-shell (UPDATE,');
});

t.test('rules, objectSelector, namespaceSelector (from a Namespace among the manifests) and matchConditions decide which webhooks run', async (t) => {
  const dir = await tempDir(t);
  const policy = join(dir, 'policy.yaml');
  await writeFile(
    policy,
    `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: prod-only
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    namespaceSelector: { matchLabels: { tier: prod } }
    objectSelector: { matchExpressions: [{ key: policy-exempt, operator: DoesNotExist }] }
    matchConditions:
      - name: not-nodes
        expression: "!request.userInfo.username.startsWith('system:node:')"
      - name: has-containers
        expression: "object.kind != 'Pod' || size(object.spec.containers) > 0"
    validations:
      - expression: "namespaceObject.metadata.labels.tier == 'prod' && object.metadata.name != 'forbidden'"
        message: not this name
`,
  );
  const manifests = join(dir, 'objects.yaml');
  const pod = (name: string, namespace: string, labels = '{}', containers = '[{ name: c, image: x }]') =>
    `apiVersion: v1\nkind: Pod\nmetadata: { name: ${name}, namespace: ${namespace}, labels: ${labels} }\nspec: { containers: ${containers} }\n`;
  await writeFile(
    manifests,
    [
      'apiVersion: v1\nkind: Namespace\nmetadata: { name: shop, labels: { tier: prod } }\n',
      pod('forbidden', 'shop'),
      pod('forbidden', 'dev'),
      pod('forbidden', 'shop', '{ policy-exempt: "yes" }'),
      pod('forbidden', 'shop', '{}', '[]'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: forbidden, namespace: shop }\n',
    ].join('---\n'),
  );
  const run = await runToolInProcess(['evaluate', '-f', manifests, '--policy-file', policy, '-v', '-o', 'json']);
  t.equal(run.code, 1);
  const report = JSON.parse(run.stdout) as { objects: { webhooks: { decision: string; why?: string; message?: string }[] }[] };
  t.same(
    report.objects.map((o) => o.webhooks[0]!.decision + (o.webhooks[0]!.why ? `: ${o.webhooks[0]!.why}` : '')),
    [
      'skipped: no rule matches',
      'denied',
      'skipped: namespaceSelector does not match',
      'skipped: objectSelector does not match',
      'skipped: matchCondition "has-containers" is false',
      'skipped: no rule matches',
    ],
  );
  t.equal(report.objects[1]!.webhooks[0]!.message, 'not this name');
});

t.test('a matchCondition that errors: Fail rejects with 403, Ignore skips the webhook', async (t) => {
  const dir = await tempDir(t);
  const policy = (failurePolicy: string) => `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: labelled
    kind: cel
    failurePolicy: ${failurePolicy}
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    matchConditions:
      - name: team-label
        expression: "object.metadata.labels.team == 'a'"
    validations: [{ expression: "true" }]
`;
  await writeFile(join(dir, 'fail.yaml'), policy('Fail'));
  await writeFile(join(dir, 'ignore.yaml'), policy('Ignore'));
  await writeFile(join(dir, 'pod.yaml'), PLAIN);
  const failed = await runToolInProcess(['evaluate', '-f', join(dir, 'pod.yaml'), '--policy-file', join(dir, 'fail.yaml')]);
  t.equal(failed.code, 1);
  t.match(failed.stdout, /labelled: denied: matchCondition "team-label" failed: .*team/);
  const ignored = await runToolInProcess(['evaluate', '-f', join(dir, 'pod.yaml'), '--policy-file', join(dir, 'ignore.yaml'), '-v']);
  t.equal(ignored.code, 0);
  t.match(ignored.stdout, /labelled: skipped \(matchCondition "team-label" failed .*skipped by failurePolicy Ignore\)/);
});

t.test('custom TypeScript handlers (the library API, compiled) are loaded with --handlers', async (t) => {
  const dir = await tempDir(t);
  const module = join(dir, 'handlers.mjs');
  await writeFile(
    module,
    `import { defineValidatingWebhook } from ${JSON.stringify(join(ROOT, 'dist', 'src', 'index.js'))};
export const webhooks = [defineValidatingWebhook({
  name: 'no-debug',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  handler: (request) => request.object.metadata.labels?.app === 'debug' ? { allowed: false, message: 'no debug pods' } : { allowed: true },
})];
`,
  );
  await writeFile(join(dir, 'pod.yaml'), PRIVILEGED);
  const run = await runToolInProcess(['evaluate', '-f', join(dir, 'pod.yaml'), '--policy-file', EXAMPLE, '--handlers', module]);
  t.equal(run.code, 1);
  t.match(run.stdout, 'validating no-debug: denied: no debug pods');
});

t.test('bad input exits 2 and names the file and document', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'broken.yaml'), `${PLAIN}---\napiVersion: v1\nkind: Pod\nmetadata: { namespace: x }\n---\n{ not: yaml: at all`);
  const cases: [string[], RegExp][] = [
    [['evaluate', '-f', join(dir, 'missing.yaml')], /missing\.yaml: cannot read/],
    [['evaluate', '-f', join(dir, 'broken.yaml')], /broken\.yaml document 2: Pod has no metadata.name/],
    [['evaluate', '-f', join(dir, 'broken.yaml'), '--policy-file', join(dir, 'broken.yaml')], /invalid policy file/],
    [['evaluate', '-f', join(dir, 'broken.yaml'), '--handlers', join(dir, 'broken.yaml')], /cannot load the handler module|must export/],
    [['evaluate'], /evaluate: give the manifests with -f/],
    [['evaluate', '-f', join(dir, 'broken.yaml'), '-o', 'xml'], /-o: "xml" is not an output format/],
  ];
  for (const [argv, message] of cases) {
    const run = await runToolInProcess(argv);
    t.equal(run.code, 2, argv.join(' '));
    t.match(run.stderr, message, argv.join(' '));
  }
  const yamlError = await runToolInProcess(['evaluate', '-f', '-'], '{ not: yaml: at all');
  t.equal(yamlError.code, 2);
  t.match(yamlError.stderr, /<stdin> document 1: invalid YAML/);
});

t.test('outside a pod the own namespace is the install namespace (kube-admission-server), so a Pod in default is judged', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'pod.yaml');
  await writeFile(file, PRIVILEGED.replace(', namespace: team-a', ''));
  const inDefault = await runToolInProcess(['evaluate', '-f', file, '--policy-file', EXAMPLE]);
  t.equal(inDefault.code, 1, inDefault.stdout);
  t.match(inDefault.stdout, 'Pod default/root-shell (CREATE,');
  t.match(inDefault.stdout, /validating deny-privileged: denied/);
  const inInstall = await runToolInProcess(['evaluate', '-f', file, '--policy-file', EXAMPLE, '--default-namespace', 'kube-admission-server']);
  t.equal(inInstall.code, 0, 'the server never intercepts its own namespace');
  t.notMatch(inInstall.stdout, /deny-privileged/);
  const ownDefault = await runToolInProcess(['evaluate', '-f', file, '--policy-file', EXAMPLE, '--namespace', 'default']);
  t.equal(ownDefault.code, 0, '--namespace names another own namespace');
});
