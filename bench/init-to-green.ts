/**
 * How long a new team waits from `init` to its first green `npm test`: `npm run build && node
 * dist/bench/init-to-green.js [ROUNDS]` packs this checkout once (not timed), then each round
 * runs, in a new temporary folder, `npx --package=<tarball> kube-admission-server init`, `npm
 * install --prefer-offline` (the dependency pointed at the tarball, since the registry does not
 * have this build) and `npm test`, and prints the medians. Same-run baseline: what any start with
 * these dependencies costs, `npm install --prefer-offline` of the tarball, typescript and
 * @types/node into an empty project and `tsc` of one file importing the package.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packStagedTree, stageWorkingTree } from '../test/support/tools/npm-package.js';
import { cleanEnvironment, runCommand } from '../test/support/tools/run-command.js';
import { median } from './stats.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STEP_MS = 5 * 60_000;
const env = cleanEnvironment();

async function timed(step: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await step();
  return (performance.now() - started) / 1000;
}

async function scaffoldRound(tarball: string): Promise<{ init: number; install: number; test: number }> {
  const work = await mkdtemp(join(tmpdir(), 'kas-init-bench-'));
  try {
    const project = join(work, 'my-webhooks');
    const init = await timed(() => runCommand('npm', ['exec', '--yes', '--prefer-offline', `--package=${tarball}`, '--', 'kube-admission-server', 'init', 'my-webhooks'], { cwd: work, env, timeoutMs: STEP_MS }));
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    manifest.dependencies['kube-admission-server'] = `file:${tarball}`;
    await writeFile(join(project, 'package.json'), JSON.stringify(manifest, null, 2));
    const install = await timed(() => runCommand('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project, env, timeoutMs: STEP_MS }));
    const test = await timed(() => runCommand('npm', ['test'], { cwd: project, env, timeoutMs: STEP_MS }));
    return { init, install, test };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function baselineRound(tarball: string, devPackages: readonly string[]): Promise<{ install: number; compile: number }> {
  const project = await mkdtemp(join(tmpdir(), 'kas-init-baseline-'));
  try {
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'baseline', private: true, type: 'module' }));
    const install = await timed(() => runCommand('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, ...devPackages], { cwd: project, env, timeoutMs: STEP_MS }));
    await writeFile(join(project, 'index.ts'), "import { defineValidatingWebhook } from 'kube-admission-server';\nexport const w = defineValidatingWebhook({ name: 'w', kind: 'Pod', handler: () => ({ allowed: true }) });\n");
    const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
    const compile = await timed(() => runCommand(process.execPath, [tsc, '--strict', '--module', 'nodenext', '--skipLibCheck', '--types', 'node', '--outDir', 'out', 'index.ts'], { cwd: project, env, timeoutMs: STEP_MS }));
    return { install, compile };
  } finally {
    await rm(project, { recursive: true, force: true });
  }
}

const rounds = Number(process.argv[2] ?? 3);
const scratch = await mkdtemp(join(tmpdir(), 'kas-init-pack-'));
try {
  const own = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  const devPackages = ['typescript', '@types/node'].map((name) => `${name}@${own.devDependencies[name]}`);
  await mkdir(scratch, { recursive: true });
  const { tarball } = await packStagedTree(await stageWorkingTree(ROOT, scratch), scratch, STEP_MS);
  const scaffold: Array<{ init: number; install: number; test: number }> = [];
  const baseline: Array<{ install: number; compile: number }> = [];
  // Interleaved, so a change in the machine's load touches both alike.
  for (let round = 0; round < rounds; round += 1) {
    baseline.push(await baselineRound(tarball, devPackages));
    scaffold.push(await scaffoldRound(tarball));
  }
  const m = (values: number[]): string => median(values).toFixed(1);
  console.log(`Node ${process.version}, ${rounds} rounds, seconds (median)`);
  console.log('| measurement | seconds |\n|---|---:|');
  console.log(`| init (npx installs the package, init writes the project) | ${m(scaffold.map((r) => r.init))} |`);
  console.log(`| npm install in the project | ${m(scaffold.map((r) => r.install))} |`);
  console.log(`| npm test (tsc, then node --test: 4 cases) | ${m(scaffold.map((r) => r.test))} |`);
  console.log(`| **init to first green npm test** | **${m(scaffold.map((r) => r.init + r.install + r.test))}** |`);
  console.log(`| baseline: npm install of the same dependencies into an empty project | ${m(baseline.map((r) => r.install))} |`);
  console.log(`| baseline: tsc of one typed handler | ${m(baseline.map((r) => r.compile))} |`);
  console.log(`| baseline total | ${m(baseline.map((r) => r.install + r.compile))} |`);
} finally {
  await rm(scratch, { recursive: true, force: true });
}
