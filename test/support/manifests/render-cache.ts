/**
 * A cache of renders shared by the test files of one machine: each manifest test file renders
 * every install, and starting kubectl and helm dozens of times per suite run costs more than
 * the checks. An entry is keyed by everything the render depends on (the contents of the input
 * trees, the tools' identity, the arguments), so a change to any of them is a miss; only
 * successful renders are stored.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const CACHE_DIR = join(tmpdir(), 'kas-render-cache');

async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort();
}

/** A digest of the input trees' file names and contents, and of the tools' path, size and mtime. */
export async function renderKey(trees: readonly string[], tools: readonly string[], parameters: unknown): Promise<string> {
  const hash = createHash('sha256');
  for (const tree of trees) {
    for (const file of await filesBelow(tree)) hash.update(`${relative(tree, file)}\0`).update(await readFile(file)).update('\0');
  }
  for (const tool of tools) {
    const info = await stat(tool);
    hash.update(`${tool}\0${info.size}\0${info.mtimeMs}\0`);
  }
  return hash.update(JSON.stringify(parameters)).digest('hex');
}

export function cacheFile(key: string): string {
  return join(CACHE_DIR, `${key}.json`);
}

export async function cachedRender<T>(key: string, render: () => Promise<T>): Promise<T> {
  const file = cacheFile(key);
  const hit = await readFile(file, 'utf8').then(
    (text) => JSON.parse(text) as T,
    () => undefined,
  );
  if (hit !== undefined) return hit;
  const value = await render();
  await mkdir(CACHE_DIR, { recursive: true });
  // Written aside and renamed, so a file running alongside never reads half an entry.
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, JSON.stringify(value));
  await rename(partial, file);
  return value;
}
