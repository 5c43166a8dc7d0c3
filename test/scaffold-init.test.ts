import t from 'tap';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { packWorkingTree, type PackedPackage } from './support/tools/npm-package.js';
import { cleanEnvironment, runCommand } from './support/tools/run-command.js';
import { requireTool } from './support/tools/tools.js';

// `kube-admission-server init` as a new team runs it: from the packed tarball through npx, then
// npm install, npm test and npm run build in the project it wrote, with the package it depends on
// being that tarball (installed from npm's cache where it can).
t.setTimeout(12 * 60_000);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
const own = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };

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

t.test('init -> npm install -> npm test green -> npm run build, against the packed tarball', async (t) => {
  const packed: PackedPackage = await packWorkingTree(ROOT, scratch, 4 * 60_000);
  for (const shipped of ['scaffold/src/webhooks.ts', 'scaffold/gitignore', 'manifests/base/kustomization.yaml', 'charts/kube-admission-server/Chart.yaml']) {
    t.ok(packed.files.includes(shipped), `the tarball ships ${shipped}`);
  }
  const env = cleanEnvironment();
  const work = join(scratch, 'team');
  await mkdir(work);
  // As a user runs it: npx installs the package (here the tarball) and runs its bin.
  await runCommand('npm', ['exec', '--yes', '--prefer-offline', `--package=${packed.tarball}`, '--', 'kube-admission-server', 'init', 'my-webhooks'], { cwd: work, env, timeoutMs: 4 * 60_000 });
  const project = join(work, 'my-webhooks');
  const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  t.same(manifest.dependencies, { 'kube-admission-server': own.version }, 'depends on this package at exactly this version');
  t.equal(manifest.devDependencies['typescript'], own.devDependencies['typescript'], 'the compiler this package is built with');
  t.match(await readFile(join(project, 'Dockerfile'), 'utf8'), new RegExp(`ARG BASE_IMAGE=kube-admission-server:${own.version.replaceAll('.', '\\.')}\\n`), 'the base image is the same version');

  // The registry does not have this build: the dependency points at the tarball instead.
  manifest.dependencies['kube-admission-server'] = `file:${packed.tarball}`;
  await writeFile(join(project, 'package.json'), JSON.stringify(manifest, null, 2));
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

  // The project's tests judge: a handler that lets everything through turns npm test red.
  const source = join(project, 'src', 'webhooks.ts');
  await writeFile(source, (await readFile(source, 'utf8')).replace('if (offenders.length === 0) return { allowed: true };', 'return { allowed: true };'));
  const broken = await runCommand('npm', ['test'], { cwd: project, env, timeoutMs: 3 * 60_000, allowFailure: true });
  t.not(broken.code, 0, 'a broken handler fails npm test');
  t.match(broken.stdout, /✖ a pod with a latest tag is denied/);
});
