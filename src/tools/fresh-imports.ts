import { registerHooks } from 'node:module';
import { sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The query naming a load of the author's module graph: a new value is a fresh graph (ESM caches by URL). */
const GENERATION_PARAMETER = 'kube-admission-server-generation';

/** `url` as the module of load `generation` (unchanged without one). */
export function versionedUrl(url: string, generation: number | undefined): string {
  if (generation === undefined) return url;
  const versioned = new URL(url);
  versioned.searchParams.set(GENERATION_PARAMETER, String(generation));
  return versioned.href;
}

let registered = false;

/**
 * ESM keeps a module for the life of the process: re-importing the entry with a new query loads
 * the entry anew but none of the files it imports. From now on, a file under one of `roots` that
 * a module of load N imports is load N too, so a reload runs every edited file of the author's
 * project, while node_modules (the library, whose instance the server's checks rely on) stay the
 * ones loaded once. The old loads stay in memory: a dev loop's price, a few kilobytes an edit.
 */
export function freshImportsUnder(roots: readonly string[]): void {
  if (registered) return;
  registered = true;
  const prefixes = roots.map((root) => pathToFileURL(root.endsWith(sep) ? root : `${root}${sep}`).href);
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      const generation = context.parentURL ? new URL(context.parentURL).searchParams.get(GENERATION_PARAMETER) : null;
      if (generation === null || !resolved.url.startsWith('file:')) return resolved;
      const inProject = prefixes.some((prefix) => resolved.url.startsWith(prefix)) && !resolved.url.includes('/node_modules/');
      return inProject ? { ...resolved, url: versionedUrl(resolved.url, Number(generation)) } : resolved;
    },
  });
}
