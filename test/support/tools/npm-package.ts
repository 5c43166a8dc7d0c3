/**
 * The npm package made and used the way its users get it: `npm pack` in a copy of the working
 * tree (so `prepack` builds from a clean state and nothing in this checkout's dist/ is touched
 * while other tests run it), then `npm install` of the tarball into a new project.
 */
import { cp, mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cleanEnvironment, runCommand } from './run-command.js';

export interface PackedPackage {
  tarball: string;
  /** Every path in the tarball, without the leading `package/`, as `tar` lists it. */
  files: string[];
}

/** The files git would commit: tracked ones and new ones that are not ignored. */
async function workingTreeFiles(repoRoot: string): Promise<string[]> {
  const { stdout } = await runCommand('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: repoRoot, timeoutMs: 30_000 });
  return stdout.split('\0').filter((path) => path !== '');
}

/** Copies the working tree to a new directory, with this checkout's node_modules linked in for the build. */
export async function stageWorkingTree(repoRoot: string, into: string): Promise<string> {
  const stage = join(into, 'source');
  for (const path of await workingTreeFiles(repoRoot)) {
    await mkdir(dirname(join(stage, path)), { recursive: true });
    await cp(join(repoRoot, path), join(stage, path), { errorOnExist: false, force: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error; // deleted but not yet committed
    });
  }
  await symlink(join(repoRoot, 'node_modules'), join(stage, 'node_modules'), 'dir');
  return stage;
}

export async function packStagedTree(stage: string, into: string, timeoutMs: number): Promise<PackedPackage> {
  const { stdout } = await runCommand('npm', ['pack', '--json', '--pack-destination', into], { cwd: stage, env: cleanEnvironment(), timeoutMs });
  const report = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>;
  const tarball = join(into, report[0]!.filename);
  const listing = await runCommand('tar', ['-tzf', tarball], { timeoutMs: 30_000 });
  const files = listing.stdout
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//, ''))
    .sort();
  return { tarball, files };
}

export interface ConsumerProject {
  dir: string;
  env: NodeJS.ProcessEnv;
}

/**
 * A new ESM project with the tarball installed (its dependencies from the registry, or npm's
 * cache) and the given dev packages to compile TypeScript against it.
 */
export async function createConsumerProject(tarball: string, devPackages: readonly string[], timeoutMs: number): Promise<ConsumerProject> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-consumer-'));
  const env = cleanEnvironment();
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ name: 'kas-consumer', private: true, type: 'module' }, null, 2)}\n`);
  await runCommand('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, ...devPackages], { cwd: dir, env, timeoutMs });
  return { dir, env };
}
