import t from 'tap';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { get } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ANY_PORTS, ChildServer } from './support/server/child-server.js';
import { STARTUP_MS } from './support/deadline.js';
import { createConsumerProject, packWorkingTree, type ConsumerProject } from './support/tools/npm-package.js';
import { runCommand } from './support/tools/run-command.js';
import { decodePatch, podReview, request, type ReviewResponse } from './support/server/server-harness.js';

// Typed handlers as a TypeScript team writes them: a new strict project, the packed package
// installed from its tarball, handlers type-checked against its declarations, the compiled
// program served as a child process and called over TLS.
t.setTimeout(10 * 60_000);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const packageJson = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };

let scratch = '';
let consumer: ConsumerProject;
t.before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'kas-typed-'));
  const packed = await packWorkingTree(ROOT, scratch, 4 * 60_000);
  const devPackages = ['typescript', '@types/node'].map((name) => `${name}@${packageJson.devDependencies[name]}`);
  consumer = await createConsumerProject(packed.tarball, devPackages, 4 * 60_000);
});
t.teardown(async () => {
  await rm(scratch, { recursive: true, force: true });
  if (consumer) await rm(consumer.dir, { recursive: true, force: true });
});

/** Code a team gets wrong: each line must be refused by the compiler with the error named here. */
const WRONG = [
  "import { defineMutatingWebhook, defineValidatingWebhook, setLabel } from 'kube-admission-server';",
  "export const typo = defineValidatingWebhook({ name: 'typo', kind: 'Pod', handler: (request) => ({ allowed: request.object?.spec?.containerz === undefined, message: 'x' }) });",
  "export const unknownKind = defineValidatingWebhook({ name: 'unknown', kind: 'Pood', handler: () => ({ allowed: true }) });",
  "export const wrongType = defineMutatingWebhook({ name: 'wrong-type', kind: 'Deployment', handler: (request) => ({ allowed: true, object: { ...request.object!, spec: { ...request.object!.spec!, replicas: 'three' } } }) });",
  "export const notObject = setLabel('pod', 'a', 'b');",
  '',
].join('\n');

t.test('typed handlers compile in a strict project against the packed package; wrong fields do not', async (t) => {
  for (const file of ['typed-webhooks.ts', 'typed-server.ts']) await copyFile(join(ROOT, 'examples', file), join(consumer.dir, file));
  await writeFile(
    join(consumer.dir, 'issue-example.ts'),
    [
      "import { defineValidatingWebhook, type ObjectOf, type k8s } from 'kube-admission-server';",
      "export const example = defineValidatingWebhook({ name: 'example', kind: 'Pod', handler: (request) => {",
      '  const image: string | undefined = request.object?.spec?.containers?.[0]?.image;',
      "  const created: string | undefined = request.oldObject?.metadata?.creationTimestamp; // a string on the wire, not a Date",
      "  return image ? { allowed: true } : { allowed: false, message: 'no image' };",
      '} });',
      "export const container: k8s.V1Container = { name: 'c', image: 'nginx' };",
      "export const deployment: ObjectOf<'Deployment'> = { spec: { selector: {}, template: { spec: { containers: [container] } } } };",
      '',
    ].join('\n'),
  );
  await writeFile(join(consumer.dir, 'wrong.ts'), WRONG);
  // The node:test recipe of docs/writing-webhooks.md, against the installed package.
  await writeFile(
    join(consumer.dir, 'webhooks.test.ts'),
    [
      "import { test } from 'node:test';",
      "import assert from 'node:assert/strict';",
      "import { admissionRequest, reviewWebhook, type ObjectOf } from 'kube-admission-server';",
      "import { noLatestTag, workloadDefaults } from './typed-webhooks.js';",
      "const pod: ObjectOf<'Pod'> = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop' }, spec: { containers: [{ name: 'web', image: 'nginx:latest' }] } };",
      "test('pods with a latest tag are denied', async () => {",
      '  const review = await reviewWebhook(noLatestTag, admissionRequest(pod));',
      '  assert.equal(review.allowed, false);',
      "  assert.match(review.message ?? '', /pin your images/);",
      '});',
      "test('kubectl debug is judged too', async () => {",
      "  const review = await reviewWebhook(noLatestTag, admissionRequest(pod, { oldObject: pod, subResource: 'ephemeralcontainers' }));",
      '  assert.equal(review.called, true);',
      '});',
      "test('deployments get TZ=UTC in every container', async () => {",
      "  const deployment: ObjectOf<'Deployment'> = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api', namespace: 'shop' }, spec: { selector: {}, template: { spec: { containers: [{ name: 'api', image: 'api:1' }] } } } };",
      '  const review = await reviewWebhook(workloadDefaults, admissionRequest(deployment));',
      "  assert.deepEqual(review.object?.spec?.template.spec?.containers[0]?.env, [{ name: 'TZ', value: 'UTC' }]);",
      '});',
      '',
    ].join('\n'),
  );
  const tsconfig = {
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, types: ['node'], outDir: 'out', skipLibCheck: false },
    files: ['typed-webhooks.ts', 'typed-server.ts', 'issue-example.ts', 'webhooks.test.ts', 'wrong.ts'],
  };
  await writeFile(join(consumer.dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  const tsc = join(consumer.dir, 'node_modules', 'typescript', 'bin', 'tsc');
  // tsc emits despite type errors (noEmitOnError is off), so the next test runs what it compiled.
  const compiled = await runCommand(process.execPath, [tsc, '-p', consumer.dir], { cwd: consumer.dir, env: consumer.env, timeoutMs: 3 * 60_000, allowFailure: true });
  const errors = compiled.stdout.split('\n').filter((line) => / error TS\d+:/.test(line));
  t.not(compiled.code, 0, 'tsc refuses wrong.ts');
  t.ok(errors.length > 0 && errors.every((line) => line.startsWith('wrong.ts(')), `every type error is in wrong.ts, none in the typed example, the issue's example or the package's types:\n${compiled.stdout}`);
  t.match(compiled.stdout, /wrong\.ts\(2,\d+\): error TS2551: Property 'containerz' does not exist on type 'V1PodSpec'\. Did you mean 'containers'\?/);
  t.match(compiled.stdout, /wrong\.ts\(3,\d+\): error TS2769: No overload matches this call\.[\s\S]*"Pood"/);
  t.match(compiled.stdout, /wrong\.ts\(4,\d+\): error TS2769[\s\S]*\{ replicas: string;[\s\S]*is not assignable to type 'Denied \| Mutated<V1Deployment>/, 'a mutated object of the wrong type');
  t.match(compiled.stdout, /wrong\.ts\(5,\d+\): error TS2559: Type '"pod"' has no properties in common with type 'WithMetadata'/);
});

t.test('the node:test recipe runs the compiled handler tests against the installed package', async (t) => {
  const run = await runCommand(process.execPath, ['--test', join('out', 'webhooks.test.js')], { cwd: consumer.dir, env: consumer.env, timeoutMs: 2 * 60_000, allowFailure: true });
  t.equal(run.code, 0, `${run.stdout}${run.stderr}`);
  t.match(run.stdout, /pass 3\n\S* ?fail 0/);
});

function deploymentReview(): Record<string, unknown> {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'api', namespace: 'team-a', creationTimestamp: null },
    spec: { selector: { matchLabels: { app: 'api' } }, template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'api', image: 'api:1.0' }] } } },
  };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'deploy-1',
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      operation: 'CREATE',
      namespace: 'team-a',
      name: 'api',
      userInfo: { username: 'alice' },
      object: deployment,
      oldObject: null,
      dryRun: false,
    },
  };
}

t.test('the compiled typed handlers are served by the compiled server', async (t) => {
  const certDir = join(consumer.dir, 'certs');
  const policy = join(consumer.dir, 'empty-policy.yaml');
  await writeFile(policy, 'apiVersion: kube-admission-server/v1\nkind: Policy\nwebhooks: []\n');
  const server = new ChildServer([...ANY_PORTS, '--cert-dir', certDir, '--policy-file', policy], { LOG_LEVEL: 'info' }, consumer.dir, join(consumer.dir, 'out', 'typed-server.js'));
  t.teardown(() => server.stop('SIGKILL'));
  const { port, healthPort } = await server.listening();
  const ready = await server.waitForMessage('ready', STARTUP_MS);
  t.same(ready['webhooks'], ['/validate/no-latest-tag', '/mutate/workload-defaults']);
  const ca = await readFile(join(certDir, 'ca.crt'), 'utf8');

  const latestReview = podReview({ image: 'nginx:latest' });
  const latest = (await request(port, '/validate/no-latest-tag?timeout=5s', latestReview, { ca })).json as ReviewResponse;
  t.equal(latest.response.allowed, false);
  t.match(latest.response.status?.message, /pin your images \(first container: nginx:latest\): container "c" uses nginx:latest/);
  const logged = await server.waitForMessage('unpinned images', STARTUP_MS);
  t.match(logged, { uid: (latestReview['request'] as { uid: string }).uid, webhook: 'no-latest-tag', component: 'handler', unpinned: 1, level: 'info' }, "context.log: the server's logger with the review's uid and the webhook's name");
  const metrics = await new Promise<string>((resolve, reject) =>
    get({ host: '127.0.0.1', port: healthPort, path: '/metrics' }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text));
    }).on('error', reject),
  );
  t.match(metrics, /\nexample_unpinned_images_total\{namespace="team-a"\} 1\n/, "context.metrics: the handler's counter on the server's /metrics");
  t.match(metrics, /\nkube_admission_requests_total\{/, 'next to the server\'s own');
  const pinned = (await request(port, '/validate/no-latest-tag?timeout=5s', podReview({ image: 'nginx:1.27' }), { ca })).json as ReviewResponse;
  t.equal(pinned.response.allowed, true);

  const mutated = (await request(port, '/mutate/workload-defaults?timeout=5s', deploymentReview(), { ca })).json as ReviewResponse;
  t.equal(mutated.response.patchType, 'JSONPatch');
  t.same(decodePatch(mutated.response.patch), [
    { op: 'add', path: '/spec/template/spec/containers/0/env', value: [{ name: 'TZ', value: 'UTC' }] },
    { op: 'add', path: '/metadata/labels', value: { 'example.com/defaulted': 'true' } },
  ]);
  const stopped = await server.stop('SIGTERM');
  t.equal(stopped.code, 0, 'SIGTERM: a clean exit');
});
