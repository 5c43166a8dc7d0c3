/**
 * Which words of a doc name a path of a folder tree (the repository, a project `init` made), and
 * whether that path is there: compiled outputs (dist/x.js) are looked for as their sources
 * (x.ts), `*`, `<placeholder>` and `{{placeholder}}` match any name, a folder is there when a
 * file under it is.
 */

/** A folder tree, as the files under it (paths with `/`, relative to it). */
export interface Tree {
  name: string;
  files: readonly string[];
}

/** The first path segment of every file and folder at the top of `tree`. */
export function topLevel(tree: Tree): Set<string> {
  return new Set(['dist', 'node_modules', ...tree.files.map((file) => file.split('/')[0] as string)]);
}

/**
 * The path `word` names, when it names one in a tree whose top level is `top`: the word (or a
 * flag's or variable's value after `=`) starts with `./` or with a top-level folder followed by
 * `/`, or is a top-level file. Quotes are gone already; curl's `@`, `$PWD/` and a trailing
 * `:line`, `#anchor` or punctuation are dropped. URLs, absolute and home paths are not the tree's.
 */
export function namedPath(word: string, top: ReadonlySet<string>): string | undefined {
  let path = /^(--?[\w-]+|[A-Za-z_]\w*)=/.test(word) ? word.slice(word.indexOf('=') + 1) : word;
  path = path.replace(/^@/, '').replace(/^\$\{?PWD\}?\//, '');
  if (/:\/\/|^[/~$-]|^\.\.|[\s,]/.test(path) || path === '') return undefined;
  path = path.replace(/^\[/, '').replace(/#.*$/, '').replace(/:\d+(:\d+)?$/, '').replace(/[.,;:)\]]+$/, '');
  const explicit = path.startsWith('./');
  path = path.replace(/^(\.\/)+/, '');
  if (path === '' || path === '.') return undefined;
  const [first = '', ...rest] = path.split('/');
  if (explicit) return path;
  if (!top.has(first)) return undefined;
  return rest.length > 0 || /\.\w+$/.test(first) ? path : undefined;
}

/** The source a compiled output is built from (dist/src/x.js -> src/x.ts, also inside node_modules/<package>/), or the path itself. */
export function sourceOf(path: string): string {
  if (!/(^|\/)dist\//.test(path)) return path;
  return path.replace(/(^|\/)dist\//, '$1').replace(/\.d\.ts$/, '.ts').replace(/\.js(\.map)?$/, '.ts');
}

function pattern(path: string): RegExp {
  const parts = path.replace(/\/+$/, '').split(/(\*\*\/|\*|<[^>/]+>|\{\{[^}/]+\}\})/);
  const source = parts.map((part, i) => (i % 2 === 0 ? part.replace(/[.+?^${}()|[\]\\]/g, '\\$&') : part === '**/' ? '(.*/)?' : '[^/]*')).join('');
  return new RegExp(`^${source}(/.*)?$`);
}

/** Whether `path` (a file, or a folder with a file under it) is in `tree`, as its source when it is compiled. */
export function inTree(path: string, tree: Tree): boolean {
  const wanted = pattern(sourceOf(path));
  return tree.files.some((file) => wanted.test(file));
}
