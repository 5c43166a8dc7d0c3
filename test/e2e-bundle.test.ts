import t from 'tap';
import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { ChildServer } from './support/server/child-server.js';
import { runCommand } from './support/tools/run-command.js';

// The server as the image runs it: scripts/bundle-server.mjs makes one file of the compiled entry
// and everything it imports (the Dockerfile puts it in place of dist/src/main.js). Run from a
// folder with no node_modules, beside copies of policies/ and schema/ only: anything the bundle
// failed to take in would fail to load there.
t.setTimeout(10 * 60_000);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
let bundle = '';

t.before(async () => {
  await runCommand(process.execPath, [join(ROOT, 'scripts', 'bundle-server.mjs')], { cwd: ROOT, timeoutMs: 5 * 60_000 });
  const alone = await mkdtemp(join(tmpdir(), 'kas-bundle-'));
  t.teardown(() => rm(alone, { recursive: true, force: true }));
  await mkdir(join(alone, 'dist', 'bundle'), { recursive: true });
  await cp(join(ROOT, 'dist', 'bundle', 'main.js'), join(alone, 'dist', 'bundle', 'main.js'));
  await cp(join(ROOT, 'policies'), join(alone, 'policies'), { recursive: true });
  await cp(join(ROOT, 'schema'), join(alone, 'schema'), { recursive: true });
  bundle = join(alone, 'dist', 'bundle', 'main.js');
});

t.test('one ASCII file that imports nothing but Node built-ins', async (t) => {
  const source = await readFile(bundle, 'utf8');
  t.notOk(/[\u0080-\uffff]/.test(source), 'ASCII only: V8 keeps and scans it as a one-byte string');
  // Minified, each import statement starts a line or follows a `;`. The banner's node:module is the
  // only one: every other built-in is required where the module using it is initialised, so a start
  // builds no ES module facades (node:http's would load Node's internal undici).
  const specifiers = [...source.matchAll(/(?:^|[;\n])\s*import\s*(?:[\w*{}\s,$]+from\s*)?["']([^"']+)["']/g)].map((m) => m[1]!);
  t.same(specifiers, ['node:module'], `static imports: ${[...new Set(specifiers)].join(', ')}`);
  // The stand-in each built-in is bundled as (scripts/bundle-server.mjs): `module.exports = require(...)`.
  const required = [...source.matchAll(/module\.exports\s*=\s*__require\(["']([^"']+)["']\)/g)].map((m) => m[1]!);
  t.ok(required.includes('node:https') && required.includes('node:crypto'), 'found the built-ins it requires');
  t.same(required.filter((s) => !isBuiltin(s)), [], `required as built-ins: ${[...new Set(required)].join(', ')}`);
  t.notMatch(source, /import\.meta\.resolve\(/, 'resolves no package at run time');
});

t.test('registers both configurations and answers reviews, then stops on SIGTERM with exit 0', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await ClusterHarness.ready(cluster.spawnReplica(t, 'kas-a', [], {}, bundle));
  t.match(replica.child.logs.find((l) => l.msg === 'registered as the leader'), { role: 'leader' });
  t.ok(cluster.configuration('validating') && cluster.configuration('mutating'), 'both configurations registered');

  const caller = cluster.caller(t, () => replica.port);
  const admitted = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(admitted.allowed, true);
  if (admitted.allowed) t.equal(admitted.object?.metadata?.labels?.['kube-admission-server/defaulted'], 'true', 'mutated by the bundled policy default-labels');
  const denied = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }, { securityContext: { privileged: true } }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(denied.allowed, false, 'denied by deny-privileged');
  if (!denied.allowed) t.match(denied.status.message, `admission webhook "validating-fail-t5.${NAME}.${NAMESPACE}.svc" denied the request: deny-privileged: `);

  t.equal((await replica.child.stop()).code, 0);
});

t.test('a policy with a cel rule loads in the bundle (cel-js once, its parser included)', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const policy = join(ROOT, 'policies', 'cel.yaml');
  const replica = await ClusterHarness.ready(cluster.spawnReplica(t, 'kas-a', ['--policy-file', policy], {}, bundle));
  t.ok(cluster.configuration('validating'), 'registered');
  const caller = cluster.caller(t, () => replica.port);
  const over = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }, { resources: { limits: { memory: '8Gi' } } }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(over.allowed, false, 'memory-limits: quantity() compared 8Gi with params.maxMemory');
  if (!over.allowed) t.match(over.status.message, 'memory limits may not exceed 4Gi');
  const within = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }, { resources: { limits: { memory: '1Gi' } } }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(within.allowed, true);
  t.equal((await replica.child.stop()).code, 0);
});

t.test('--help and an invalid flag behave as the unbundled entry', async (t) => {
  const help = new ChildServer(['--help'], {}, undefined, bundle);
  const helped = await help.exit(EVENT_MS);
  t.equal(helped.code, 0);
  t.match(help.stdout, /^Usage: kube-admission-server/);
  const invalid = new ChildServer(['--port', 'x'], {}, undefined, bundle);
  t.equal((await invalid.exit(EVENT_MS)).code, 2, 'exit 2 on an invalid configuration');
  t.match(invalid.stderr, /--port/);
});
