import t from 'tap';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { stageWorkingTree } from './support/tools/npm-package.js';
import { cleanEnvironment, runCommand } from './support/tools/run-command.js';
import { requireTool } from './support/tools/tools.js';
import { ANY_PORTS, ChildServer } from './support/server/child-server.js';
import { STARTUP_MS } from './support/deadline.js';
import { podReview, request, type ReviewResponse } from './support/server/server-harness.js';

// `kube-admission-server init` as a new team runs it before the package is on the registry: from
// a clone, `npm run init -- DIR` packs the clone and inits a project that depends on the tarball;
// then npm install, npm test, npm run build and npm run dev in the project it wrote, as written
// (its dependencies installed from npm's cache where it can).
t.setTimeout(12 * 60_000);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
const own = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };
const TARBALL = `kube-admission-server-${own.version}.tgz`;

let scratch = '';
t.before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'kas-init-'));
});
t.teardown(() => rm(scratch, { recursive: true, force: true }));

async function init(args: readonly string[], cwd: string) {
  return runCommand(process.execPath, [MAIN, 'init', ...args], { cwd, timeoutMs: 60_000, allowFailure: true });
}

t.test('a folder with anything in it is refused, naming what is there, and left as it was', async (t) => {
  const target = join(scratch, 'taken');
  await mkdir(target);
  await writeFile(join(target, 'notes.txt'), 'mine');
  const refused = await init(['taken'], scratch);
  t.equal(refused.code, 2, 'exit 2: bad input');
  t.match(refused.stderr, /kube-admission-server init: .*taken is not empty \(notes\.txt\); init writes only into a new or empty folder/);
  t.same(await readdir(target), ['notes.txt'], 'nothing written next to it');
  t.equal(await readFile(join(target, 'notes.txt'), 'utf8'), 'mine');
  t.same((await readdir(scratch)).filter((entry) => entry.includes('.init-')), [], 'no staging folder left behind');
});

t.test('a name npm, an image and Helm cannot all take is refused before anything is written', async (t) => {
  const refused = await init(['My_Webhooks'], scratch);
  t.equal(refused.code, 2);
  t.match(refused.stderr, /"My_Webhooks" cannot name the project .* or choose it with --name/);
  t.same((await readdir(scratch)).filter((entry) => /my_webhooks/i.test(entry)), []);
  const named = await init(['My_Webhooks', '--name', 'shop-webhooks'], scratch);
  t.equal(named.code, 0, named.stderr);
  t.equal(JSON.parse(await readFile(join(scratch, 'My_Webhooks', 'package.json'), 'utf8')).name, 'shop-webhooks', '--name wins over the folder');
});

t.test('a folder holding only .git (a fresh git init) is written into, and .git kept', async (t) => {
  const target = join(scratch, 'with-git');
  await mkdir(join(target, '.git'), { recursive: true });
  await writeFile(join(target, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  const written = await init([target], scratch);
  t.equal(written.code, 0, written.stderr);
  t.equal(await readFile(join(target, '.git', 'HEAD'), 'utf8'), 'ref: refs/heads/main\n');
  t.ok((await readdir(target)).includes('package.json'));
  t.ok((await readdir(target)).includes('.gitignore'), 'gitignore gets its dot back (npm drops .gitignore from packages)');
});

t.test('without --tarball the project depends on the registry\'s version; a --tarball of another name or none is refused', async (t) => {
  const written = await init(['registry-path'], scratch);
  t.equal(written.code, 0, written.stderr);
  const project = join(scratch, 'registry-path');
  const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  t.same(manifest.dependencies, { 'kube-admission-server': own.version }, 'depends on this package at exactly this version');
  t.equal(manifest.devDependencies['typescript'], own.devDependencies['typescript'], 'the compiler this package is built with');
  t.match(await readFile(join(project, 'Dockerfile'), 'utf8'), new RegExp(`ARG BASE_IMAGE=kube-admission-server:${own.version.replaceAll('.', '\\.')}\\n`), 'the base image is the same version');
  t.notOk((await readdir(project)).some((entry) => entry.endsWith('.tgz')), 'no tarball');

  const other = join(scratch, 'kube-admission-server-9.9.9.tgz');
  await writeFile(other, 'not this version');
  const renamed = await init(['other-version', '--tarball', other], scratch);
  t.equal(renamed.code, 2);
  t.match(renamed.stderr, new RegExp(`--tarball .*kube-admission-server-9\\.9\\.9\\.tgz: expected ${TARBALL.replaceAll('.', '\\.')}`));
  const missing = await init(['missing-tarball', '--tarball', join(scratch, TARBALL)], scratch);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /--tarball .*: no such file \(make it with `npm pack`, or `npm run init -- DIR` in a clone/);
  t.same((await readdir(scratch)).filter((entry) => /other-version|missing-tarball|\.init-/.test(entry)), [], 'nothing written for either');
});

t.test('from a clone: npm run init -> npm install -> npm test green -> npm run build -> npm run dev serves the project\'s webhooks alone', async (t) => {
  // A clone of the repository: the files git would commit, with node_modules (npm ci done).
  const clone = await stageWorkingTree(ROOT, scratch);
  const env = cleanEnvironment();
  const work = join(scratch, 'team');
  await mkdir(work);
  // One command in the clone packs it and writes the project; a relative folder is taken from where npm runs.
  const made = await runCommand('npm', ['run', 'init', '--', join('..', 'team', 'my-webhooks')], { cwd: clone, env, timeoutMs: 4 * 60_000, allowFailure: true });
  t.equal(made.code, 0, `npm run init succeeds:\n${made.stdout}${made.stderr}`);
  const project = join(work, 'my-webhooks');
  const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; scripts: Record<string, string> };
  t.same(manifest.dependencies, { 'kube-admission-server': `file:${TARBALL}` }, 'depends on the tarball beside its package.json');
  const shipped = (await runCommand('tar', ['-tzf', join(project, TARBALL)], { timeoutMs: 30_000 })).stdout.split('\n');
  for (const file of ['package/dist/src/index.js', 'package/scaffold/src/webhooks.ts', 'package/manifests/base/kustomization.yaml', 'package/charts/kube-admission-server/Chart.yaml']) {
    t.ok(shipped.includes(file), `the tarball in the project is the package: it ships ${file}`);
  }

  // As written: no edit of package.json between init and install.
  await runCommand('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project, env, timeoutMs: 4 * 60_000 });
  const tested = await runCommand('npm', ['test'], { cwd: project, env, timeoutMs: 3 * 60_000, allowFailure: true });
  t.equal(tested.code, 0, `npm test is green:\n${tested.stdout}${tested.stderr}`);
  t.match(tested.stdout, /ℹ pass 4\n/, 'four cases ran');
  t.match(tested.stdout, /ℹ fail 0\n/);

  const built = await runCommand('npm', ['run', 'build'], { cwd: project, env, timeoutMs: 3 * 60_000, allowFailure: true });
  t.equal(built.code, 0, built.stdout + built.stderr);
  const listed = await runCommand(process.execPath, ['--input-type=module', '-e', "const m = await import('./dist/src/webhooks.js'); console.log(JSON.stringify(m.webhooks.map((w) => [w.type, w.name, w.rules.flatMap((r) => r.resources)])))"], { cwd: project, env, timeoutMs: 60_000 });
  t.same(JSON.parse(listed.stdout), [
    ['validating', 'pinned-images', ['pods', 'pods/ephemeralcontainers']],
    ['mutating', 'workload-defaults', ['deployments', 'statefulsets', 'daemonsets']],
  ], 'one typed validating and one typed mutating webhook, rules from their kinds');

  // The kustomize overlay builds from the installed package's base, with the project's image.
  const kustomized = await runCommand(requireTool('kubectl'), ['kustomize', join(project, 'deploy', 'kustomize')], { cwd: project, env, timeoutMs: 60_000 });
  const deployment = parseAllDocuments(kustomized.stdout).map((d) => d.toJS() as { kind: string; spec?: { template: { spec: { containers: Array<{ image: string }> } } } }).find((o) => o.kind === 'Deployment');
  t.equal(deployment?.spec?.template.spec.containers[0]?.image, 'my-webhooks:1.0.0', 'the overlay serves the project\'s image');

  // npm run dev is `tsc && node dist/src/main.js <flags>`: compiled above, run with its flags on ports the OS picks.
  const dev = /^tsc -p tsconfig\.json && node dist\/src\/main\.js (.+)$/.exec(manifest.scripts['dev'] ?? '');
  t.ok(dev, `npm run dev compiles and runs the program: ${manifest.scripts['dev']}`);
  const devFlags = dev![1]!.split(' ');
  const startDev = async (extra: readonly string[]) => {
    const server = new ChildServer([...devFlags, ...ANY_PORTS, ...extra], { LOG_LEVEL: 'info' }, project, join(project, 'dist', 'src', 'main.js'));
    t.teardown(() => server.stop('SIGKILL'));
    const { port } = await server.listening();
    const ready = await server.waitForMessage('ready', STARTUP_MS);
    return { server, port, webhooks: [...(ready['webhooks'] as string[])].sort(), ca: await readFile(join(project, '.certs', 'ca.crt'), 'utf8') };
  };
  const privileged = podReview({ image: 'nginx:1.27.3' });
  ((privileged['request'] as { object: { spec: { containers: Array<Record<string, unknown>> } } }).object.spec.containers[0]!)['securityContext'] = { privileged: true };

  const alone = await startDev([]);
  t.same(alone.webhooks, ['/mutate/workload-defaults', '/validate/pinned-images'], 'npm run dev serves the project\'s two webhooks and nothing else');
  const notServed = (await request(alone.port, '/validate/deny-privileged?timeout=5s', privileged, { ca: alone.ca })).json as ReviewResponse;
  t.equal(notServed.response.allowed, true, 'the bundled example policy\'s deny-privileged is not served: a privileged Pod is not refused');
  t.match(notServed.response.warnings?.join('\n') ?? '', /does not serve "deny-privileged"/);
  const unpinned = (await request(alone.port, '/validate/pinned-images?timeout=5s', podReview({ image: 'nginx:latest' }), { ca: alone.ca })).json as ReviewResponse;
  t.equal(unpinned.response.allowed, false, 'the project\'s handler answers');
  t.equal((await alone.server.stop('SIGTERM')).code, 0, 'SIGTERM: a clean exit');

  // A policy the project names is served next to its webhooks (here the package's example).
  const withPolicy = await startDev(['--policy-file', join(project, 'node_modules', 'kube-admission-server', 'policies', 'example.yaml')]);
  t.ok(withPolicy.webhooks.includes('/validate/deny-privileged'), `--policy-file adds the policy's webhooks: ${withPolicy.webhooks.join(', ')}`);
  t.ok(withPolicy.webhooks.includes('/validate/pinned-images') && withPolicy.webhooks.includes('/mutate/workload-defaults'), 'next to the project\'s');
  const denied = (await request(withPolicy.port, '/validate/deny-privileged?timeout=5s', privileged, { ca: withPolicy.ca })).json as ReviewResponse;
  t.equal(denied.response.allowed, false, 'and its deny-privileged refuses the privileged Pod');
  t.equal((await withPolicy.server.stop('SIGTERM')).code, 0);

  // The project's tests judge: a handler that lets everything through turns npm test red.
  const source = join(project, 'src', 'webhooks.ts');
  await writeFile(source, (await readFile(source, 'utf8')).replace('if (offenders.length === 0) return { allowed: true };', 'return { allowed: true };'));
  const broken = await runCommand('npm', ['test'], { cwd: project, env, timeoutMs: 3 * 60_000, allowFailure: true });
  t.not(broken.code, 0, 'a broken handler fails npm test');
  t.match(broken.stdout, /✖ a pod with a latest tag is denied/);
});
