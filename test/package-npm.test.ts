import t from 'tap';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ANY_PORTS, ChildServer } from './support/server/child-server.js';
import { STARTUP_MS } from './support/deadline.js';
import { createConsumerProject, packWorkingTree, type ConsumerProject, type PackedPackage } from './support/tools/npm-package.js';
import { runCommand } from './support/tools/run-command.js';
import { decodePatch, podReview, request, type ReviewResponse } from './support/server/server-harness.js';

// The package is packed, installed into a new project and used there as its users will: the
// example compiled with tsc against the installed types, run with node, the binary run by name.
t.setTimeout(10 * 60_000);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const packageJson = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; devDependencies: Record<string, string> };

/**
 * The package's exported names. Removing or renaming one breaks users (docs/compatibility.md):
 * change this list only together with a CHANGELOG entry.
 */
const EXPORTED_NAMES = [
  'BUILT_IN_KIND_TABLE',
  'BUILT_IN_RULES',
  'DEFAULT_AUDIT_KEY',
  'DEFAULT_EXCLUDED_NAMESPACES',
  'DEFAULT_KIND_OPERATIONS',
  'EXIT_FAILURE',
  'EXIT_INVALID_CONFIG',
  'EXIT_OK',
  'InvalidMetadataError',
  'MAX_WARNING_LENGTH',
  'ManifestError',
  'NAMESPACE_NAME_LABEL',
  'PERMISSION_VERBS',
  'POLICY_API_VERSION',
  'POLICY_KIND',
  'WEBHOOK_DEFAULTS',
  'WORKLOAD_KINDS',
  'WebhookDefinitionError',
  'WebhookRegistry',
  'addToleration',
  'addVolume',
  'admissionRequest',
  'admissionRequestFor',
  'applyMode',
  'applyPatch',
  'computePatch',
  'containersOf',
  'defineKind',
  'defineMutatingWebhook',
  'defineValidatingWebhook',
  'describeContainer',
  'evaluateObjects',
  'excludedNamespaceRequirement',
  'isBuiltInKind',
  'isExcludedNamespace',
  'isValidAuditAnnotationKey',
  'loadPolicyFile',
  'normalizeImage',
  'parseManifests',
  'parsePolicy',
  'podSpecsOf',
  'readManifests',
  'removeAnnotation',
  'removeLabel',
  'reviewPolicy',
  'reviewWebhook',
  'rulesForKinds',
  'runKubeAdmissionServer',
  'setAnnotation',
  'setEnvVar',
  'setLabel',
  'simulate',
  'truncateWarning',
  'webhookMatches',
  'webhookPath',
  'workloadContainers',
  'workloadPodSpecs',
];

let scratch = '';
let packed: PackedPackage;
let consumer: ConsumerProject;
t.before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'kas-npm-package-'));
  packed = await packWorkingTree(ROOT, scratch, 4 * 60_000);
  const devPackages = ['typescript', '@types/node'].map((name) => `${name}@${packageJson.devDependencies[name]}`);
  consumer = await createConsumerProject(packed.tarball, devPackages, 4 * 60_000);
});
t.teardown(async () => {
  await rm(scratch, { recursive: true, force: true });
  if (consumer) await rm(consumer.dir, { recursive: true, force: true });
});

t.test('the tarball holds the compiled library, its types, the bin and the bundled policies, and nothing else', async (t) => {
  const { files } = packed;
  t.equal(packed.tarball.endsWith(`${packageJson.name}-${packageJson.version}.tgz`), true, 'named for the version');
  for (const required of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/main.js', 'policies/example.yaml', 'policies/cel.yaml', 'schema/policy.schema.json']) {
    t.ok(files.includes(required), `has ${required}`);
  }
  const unexpected = files.filter(
    (f) => !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(f) && !/^dist\/src\/.+\.(js|d\.ts)$/.test(f) && !/^dist\/src\/kube\/evaluation\/kube-defaults\/kubernetes-[0-9.]+\.json$/.test(f) && !/^policies\/[^/]+\.yaml$/.test(f) && f !== 'schema/policy.schema.json' &&
      // What `init` writes, and the install it deploys with: versioned with the package.
      !/^(scaffold|manifests|charts)\//.test(f),
  );
  t.same(unexpected, [], 'no tests, test support, benchmarks, sources, maps or tooling');
  // Every module compiled from src/ is there with its declarations, and nothing compiled from elsewhere.
  const sources = (await runCommand('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'src'], { cwd: ROOT, timeoutMs: 30_000 })).stdout
    .split('\n')
    .filter((f) => f.endsWith('.ts'));
  t.same(
    files.filter((f) => f.endsWith('.js')).sort(),
    sources.map((f) => `dist/${f.replace(/\.ts$/, '.js')}`).sort(),
    'one .js per source file',
  );
  t.same(
    files.filter((f) => f.endsWith('.d.ts')).sort(),
    sources.map((f) => `dist/${f.replace(/\.ts$/, '.d.ts')}`).sort(),
    'one .d.ts per source file',
  );
});

t.test('the example type-checks against the installed package, and wrong code does not', async (t) => {
  for (const file of ['custom-handler.ts', 'server.ts']) await copyFile(join(ROOT, 'examples', file), join(consumer.dir, file));
  // A handler that answers `allowed: "yes"`: the compiler must refuse it, so the check is not vacuous.
  await writeFile(
    join(consumer.dir, 'wrong.ts'),
    "import { defineValidatingWebhook } from 'kube-admission-server';\nexport const wrong = defineValidatingWebhook({ name: 'wrong', rules: [], handler: () => ({ allowed: 'yes' }) });\n",
  );
  const tsconfig = {
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: ['node'], outDir: 'out', skipLibCheck: false },
    files: ['custom-handler.ts', 'server.ts', 'wrong.ts'],
  };
  await writeFile(join(consumer.dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  const tsc = join(consumer.dir, 'node_modules', 'typescript', 'bin', 'tsc');
  // tsc emits despite type errors (noEmitOnError is off), so the next test runs what it compiled.
  const compiled = await runCommand(process.execPath, [tsc, '-p', consumer.dir], { cwd: consumer.dir, env: consumer.env, timeoutMs: 3 * 60_000, allowFailure: true });
  const errors = compiled.stdout.split('\n').filter((line) => / error TS\d+:/.test(line));
  t.not(compiled.code, 0, 'tsc reports the wrong handler');
  t.ok(errors.length > 0 && errors.every((line) => line.startsWith('wrong.ts(')), `every type error is in wrong.ts, none in the example or the package's types:\n${compiled.stdout}`);
  // The typed and the untyped forms are overloads: the compiler names both, each refusing the string.
  t.match(compiled.stdout, /wrong\.ts\(2,\d+\): error TS2769: No overload matches this call\.[\s\S]*Overload 2 of 2, '\(definition: ValidatingWebhookDefinition\)[\s\S]*Type 'string' is not assignable to type '(false|boolean)'/);
});

t.test('the example runs against the installed package and serves its handlers and the bundled policy it names', async (t) => {
  const certDir = join(consumer.dir, 'certs');
  // A program serves its own handlers alone unless a policy is named: here the package's example.
  const examplePolicy = join(consumer.dir, 'node_modules', 'kube-admission-server', 'policies', 'example.yaml');
  const server = new ChildServer([...ANY_PORTS, '--cert-dir', certDir, '--policy-file', examplePolicy], { LOG_LEVEL: 'info' }, consumer.dir, join(consumer.dir, 'out', 'server.js'));
  t.teardown(() => server.stop('SIGKILL'));
  const { port } = await server.listening();
  const ready = await server.waitForMessage('ready', STARTUP_MS);
  const served = ready['webhooks'] as string[];
  const bundled = (parse(await readFile(join(ROOT, 'policies', 'example.yaml'), 'utf8')) as { webhooks: Array<{ name: string }> }).webhooks.map((w) => w.name);
  t.equal(served.length, bundled.length + 2, 'every entry of the bundled policies/example.yaml plus the two custom handlers');
  for (const path of ['/validate/require-pinned-images', '/mutate/annotate-creator', ...bundled.map((name) => `/${name}`)]) {
    t.ok(served.some((p) => p.endsWith(path)), `serves ${path}`);
  }
  const registered = ready['registered'] as string[];
  t.ok(registered.length < served.length, `grouped: ${registered.length} webhooks registered for ${served.length} entries`);
  for (const name of [...bundled, 'require-pinned-images', 'annotate-creator']) {
    t.equal(registered.filter((p) => p.split('/').slice(3).join('.').split('.').includes(name)).length, 1, `${name} is in exactly one group's path`);
  }
  const ca = await readFile(join(certDir, 'ca.crt'), 'utf8');

  const unpinned = podReview({ image: 'nginx:latest' });
  const warned = (await request(port, '/validate/require-pinned-images?timeout=5s', unpinned, { ca })).json as ReviewResponse;
  t.equal(warned.response.allowed, true, 'warn mode admits');
  t.match(warned.response.warnings?.join('\n') ?? '', /image "nginx:latest" is not pinned/);

  const mutated = (await request(port, '/mutate/annotate-creator?timeout=5s', unpinned, { ca })).json as ReviewResponse;
  t.same(decodePatch(mutated.response.patch), [{ op: 'add', path: '/metadata/annotations', value: { 'example.com/created-by': 'kubernetes-admin' } }]);

  const privileged = podReview();
  ((privileged['request'] as { object: { spec: { containers: Array<Record<string, unknown>> } } }).object.spec.containers[0]!)['securityContext'] = { privileged: true };
  const denied = (await request(port, '/validate/deny-privileged?timeout=5s', privileged, { ca })).json as ReviewResponse;
  t.equal(denied.response.allowed, false, 'the bundled policy’s rule denies');

  const stopped = await server.stop('SIGTERM');
  t.equal(stopped.code, 0, 'SIGTERM: a clean exit');
});

t.test('the binary runs by its name, and the exports are the package root only', async (t) => {
  const bin = join(consumer.dir, 'node_modules', '.bin', 'kube-admission-server');
  const help = await runCommand(bin, ['--help'], { cwd: consumer.dir, env: consumer.env, timeoutMs: 60_000 });
  t.match(help.stdout, /--policy-file/, 'the installed bin (shebang, run bit) prints --help');

  // The bundled CEL policy loads (its fields are checked against schema/policy.schema.json, which
  // must ship too) and judges a manifest.
  await writeFile(join(consumer.dir, 'latest.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: { name: web, namespace: shop }\nspec:\n  containers: [{ name: web, image: nginx:latest }]\n');
  const celPolicy = join(consumer.dir, 'node_modules', 'kube-admission-server', 'policies', 'cel.yaml');
  const evaluated = await runCommand(bin, ['evaluate', '--policy-file', celPolicy, '-f', 'latest.yaml'], { cwd: consumer.dir, env: consumer.env, timeoutMs: 60_000, allowFailure: true });
  // (not in `default`: the server's own namespace, which is never intercepted, is `default` outside a pod)
  t.match(evaluated.stdout, /image nginx:latest uses the latest tag/, `evaluate with the bundled cel.yaml:\n${evaluated.stdout}${evaluated.stderr}`);
  t.match(evaluated.stdout, /denied: every container needs a memory limit/);
  t.equal(evaluated.code, 1, 'exit 1: something would be denied');

  const list = await runCommand(process.execPath, ['--input-type=module', '-e', "const m = await import('kube-admission-server'); console.log(JSON.stringify(Object.keys(m).sort()))"], {
    cwd: consumer.dir,
    env: consumer.env,
    timeoutMs: 60_000,
  });
  t.same(JSON.parse(list.stdout), EXPORTED_NAMES, 'the API surface (docs/compatibility.md): a change here is a CHANGELOG entry');

  const deep = await runCommand(process.execPath, ['--input-type=module', '-e', "await import('kube-admission-server/dist/src/main.js')"], {
    cwd: consumer.dir,
    env: consumer.env,
    timeoutMs: 60_000,
    allowFailure: true,
  });
  t.match(deep.stderr, /ERR_PACKAGE_PATH_NOT_EXPORTED/, 'deep imports are not part of the API and are refused');
});
