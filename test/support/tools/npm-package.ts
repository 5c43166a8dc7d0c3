/**
 * The npm package made and used the way its users get it: `npm pack` in a copy of the working
 * tree (so `prepack` builds from a clean state and nothing in this checkout's dist/ is touched
 * while other tests run it), then `npm install` of the tarball into a new project.
 */
import { createHash } from 'node:crypto';
import { copyFile, cp, mkdir, mkdtemp, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
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

const PACK_CACHE_DIR = join(tmpdir(), 'kas-pack-cache');

/**
 * The tarball of the working tree as packStagedTree makes it, made once per content: four test
 * files pack it (the package, typed handlers, init, the scaffold's image), and each pack copies
 * the tree and compiles src/ from clean. Keyed by every path and byte of the files git would
 * commit (sources, package.json and package-lock.json, the tsconfigs, scripts) and by the Node and
 * npm that pack, so any change to what goes into the package is a miss; only finished packs are
 * stored, written aside and renamed (another file may read the cache at the same time).
 */
export async function packWorkingTree(repoRoot: string, into: string, timeoutMs: number): Promise<PackedPackage> {
  const hash = createHash('sha256');
  for (const path of (await workingTreeFiles(repoRoot)).sort()) {
    const content = await readFile(join(repoRoot, path)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined; // deleted but not yet committed: not staged either
      throw error;
    });
    if (content !== undefined) hash.update(`${path}\0`).update(content).update('\0');
  }
  const npmVersion = (await runCommand('npm', ['--version'], { env: cleanEnvironment(), timeoutMs: 60_000 })).stdout.trim();
  const key = hash.update(`${process.version}\0${npmVersion}`).digest('hex');
  const entry = join(PACK_CACHE_DIR, `${key}.json`);
  const hit = await readFile(entry, 'utf8').then(
    (text) => JSON.parse(text) as { filename: string; files: string[] },
    () => undefined,
  );
  if (hit !== undefined) {
    const tarball = join(into, hit.filename);
    await copyFile(join(PACK_CACHE_DIR, `${key}.tgz`), tarball);
    return { tarball, files: hit.files };
  }
  const packed = await packStagedTree(await stageWorkingTree(repoRoot, into), into, timeoutMs);
  await mkdir(PACK_CACHE_DIR, { recursive: true });
  const partial = `.${process.pid}.partial`;
  await copyFile(packed.tarball, join(PACK_CACHE_DIR, `${key}.tgz${partial}`));
  await rename(join(PACK_CACHE_DIR, `${key}.tgz${partial}`), join(PACK_CACHE_DIR, `${key}.tgz`));
  // The entry last: a reader that finds it finds the whole tarball.
  await writeFile(`${entry}${partial}`, JSON.stringify({ filename: basename(packed.tarball), files: packed.files }));
  await rename(`${entry}${partial}`, entry);
  return packed;
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
