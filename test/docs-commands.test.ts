// Docs that cannot drift: every kube-admission-server command line a doc shows (in a fenced shell
// block or an inline code span) is read by the CLI's own parser against the commands' specs
// (src/commands/), so a made-up command or flag, or a server flag the command does not read, is
// found; every `npm run` names a script of its package.json; every path a doc names is in the
// repository, or, for the docs of a project `init` makes, in such a project.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { COMMANDS } from '../src/commands/index.js';
import { parseCommandLine } from '../src/config/command-line.js';
import { blockCommands, fencedBlocks, inlineCodeSpans, invocationArgs, simpleCommands, SHELL_LANGUAGES, type DocCommand } from './support/docs/doc-commands.js';
import { inTree, namedPath, topLevel, type Tree } from './support/docs/doc-paths.js';
import { runCommand } from './support/tools/run-command.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MAIN = join(ROOT, 'dist/src/main.js');

/** Made by a command, so not in the repository (each is in .gitignore; a test below holds that). */
const GENERATED: Record<string, string> = {
  'certs/': 'npm start writes the CA and serving certificate it generates there',
  '.local-cluster/': "npm run local-cluster writes its kubeconfig and the Pods' folders there",
  'docs/api/': 'npm run docs builds the API reference there',
  'bench/results/': 'every benchmark writes its raw results there',
};

/** Files of the reader's own that a doc names like a path of the tree: not looked for. */
const BROUGHT: Record<string, string> = {
  'local-cluster/README.md dist/server.js': "an example of another image's entry point, which the kubelet runs",
  'local-cluster/README.md dist/main.js': "an example of another image's entry point, which the kubelet runs",
};

/** The flags whose value is a file the command writes: its folder must exist, not the file. */
const OUTPUT_FLAGS = new Set(['--out', '--junit']);

/** The flag whose value is the reader's compiled handlers: a module of a project `init` makes, whichever doc shows it. */
const PROJECT_FLAGS = new Set(['--handlers']);

/** The problems of a command line that mean a command or flag the CLI does not have. */
const NOT_IN_THE_CLI = /unknown command|unknown flag|not a flag of|needs a value/;

const DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  'BENCHMARKS.md',
  ...(await readdir(join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
  'local-cluster/README.md',
  'local-cluster/CONTRACT.md',
  'scaffold/README.md',
];

/** The docs about a project `init` makes (and the commands' --help examples, typed there too): their paths may be the project's. */
const PROJECT_DOCS = new Set(['scaffold/README.md', 'docs/writing-webhooks.md', ...COMMANDS.map((command) => `src/commands/${command.name}.ts`)]);

const repository: Tree = { name: 'the repository', files: execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter((file) => file !== '') };
const ownPackage = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { files: string[]; scripts: Record<string, string> };

/** What `init` writes, with the package installed: node_modules/kube-admission-server holds the package's files. */
async function initProject(): Promise<{ tree: Tree; scripts: Record<string, string> }> {
  const scratch = await mkdtemp(join(tmpdir(), 'kas-docs-'));
  try {
    await runCommand(process.execPath, [MAIN, 'init', 'my-webhooks'], { cwd: scratch, timeoutMs: 60_000 });
    const dir = join(scratch, 'my-webhooks');
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    const written = entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
    const packaged = ownPackage.files.map((pattern) => pattern.split('/')[0] as string);
    // The package's compiled files are looked for as their sources (dist/src/x.js as src/x.ts).
    const installed = repository.files.filter((file) => packaged.includes(file.split('/')[0] as string) || (packaged.includes('dist') && file.startsWith('src/')));
    const files = [...written, 'node_modules/.bin/kube-admission-server', ...installed.map((file) => `node_modules/kube-admission-server/${file}`)];
    const scripts = (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    return { tree: { name: 'a project init makes', files }, scripts };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

const project = await initProject();

/** The trees a doc's paths may be in: the repository and the doc's own folder, or the project. */
function treesOf(doc: string): Tree[] {
  const folder = doc.includes('/') ? doc.slice(0, doc.lastIndexOf('/') + 1) : '';
  const own: Tree[] = folder === '' ? [] : [{ name: folder, files: repository.files.filter((f) => f.startsWith(folder)).map((f) => f.slice(folder.length)) }];
  if (doc.startsWith('scaffold/')) return [project.tree];
  return PROJECT_DOCS.has(doc) ? [repository, ...own, project.tree] : [repository, ...own];
}

function scriptsOf(doc: string): Set<string> {
  if (doc.startsWith('scaffold/')) return new Set(Object.keys(project.scripts));
  return new Set([...Object.keys(ownPackage.scripts), ...(PROJECT_DOCS.has(doc) ? Object.keys(project.scripts) : [])]);
}

interface Problem {
  doc: string;
  line: number;
  problem: string;
}

/** The problems of one command line of a doc; `typed` for a shell block (meant to run as shown), not prose. */
function commandProblems(doc: string, command: DocCommand, typed: boolean): string[] {
  const problems: string[] = [];
  const docTrees = treesOf(doc);
  const outputs = new Set(command.outputs);
  command.words.forEach((word, i) => OUTPUT_FLAGS.has(command.words[i - 1] ?? '') && outputs.add(word));
  for (const word of command.words.filter((w) => /^--[\w-]+=/.test(w) && OUTPUT_FLAGS.has(w.slice(0, w.indexOf('='))))) outputs.add(word);

  for (const [i, word] of [...command.words, ...command.outputs].entries()) {
    const trees = PROJECT_FLAGS.has(command.words[i - 1] ?? '') ? [project.tree] : docTrees;
    const path = trees.map((tree) => namedPath(word, topLevel(tree))).find((p) => p !== undefined);
    if (path === undefined || path === 'dist' || path === 'dist/') continue;
    if (BROUGHT[`${doc} ${path}`] !== undefined || Object.keys(GENERATED).some((prefix) => `${path}/`.startsWith(prefix))) continue;
    const looked = outputs.has(word) ? path.replace(/\/?[^/]*$/, '') : path;
    if (looked !== '' && !trees.some((tree) => inTree(looked, tree))) problems.push(`${path}: no such path in ${trees.map((tree) => tree.name).join(' or ')}`);
  }

  const npm = command.words[0] === 'npm' ? command.words.slice(1).filter((w) => !w.startsWith('-')) : [];
  const script = npm[0] === 'run' ? npm[1] : npm[0] === 'test' || npm[0] === 'start' ? npm[0] : undefined;
  if (script !== undefined && !script.includes('<') && !scriptsOf(doc).has(script)) problems.push(`npm run ${script}: no such script in package.json`);

  let args = invocationArgs(command.words);
  if (args === undefined) return problems;
  if (!typed) args = args.map((arg) => arg.replace(/^\[|\]$/g, '')).filter((arg) => arg !== '...' && arg !== '');
  const word = args.find((arg) => !arg.startsWith('-'));
  if (word?.startsWith('<')) return problems; // `<command> --help`: a command the reader picks
  const line = parseCommandLine(args, COMMANDS);
  const found = line.kind === 'help' ? [] : line.problems;
  problems.push(...found.filter((p) => typed || NOT_IN_THE_CLI.test(p)).map((p) => `kube-admission-server ${args.join(' ')}: ${p}`));
  return problems;
}

/** Every problem of one doc's commands and paths. */
function docProblems(doc: string, markdown: string): Problem[] {
  const problems: Problem[] = [];
  for (const block of fencedBlocks(markdown)) {
    if (block.language === '' && /^\$ /m.test(block.text)) problems.push({ doc, line: block.line, problem: 'a block of `$ ` command lines: tag it ```console so its commands are checked' });
    if (!SHELL_LANGUAGES.has(block.language)) continue;
    for (const command of blockCommands(block)) problems.push(...commandProblems(doc, command, true).map((problem) => ({ doc, line: command.line, problem })));
  }
  for (const span of inlineCodeSpans(markdown)) {
    for (const command of simpleCommands(span.text, span.line)) problems.push(...commandProblems(doc, command, false).map((problem) => ({ doc, line: span.line, problem })));
  }
  return problems;
}

t.test('every command, flag, script and path the docs show exists', async (t) => {
  const problems: Problem[] = [];
  for (const doc of DOCS) problems.push(...docProblems(doc, await readFile(join(ROOT, doc), 'utf8')));
  t.same(problems.map((p) => `${p.doc}:${p.line}: ${p.problem}`), []);
});

t.test("the examples of every command's --help exist as well", async (t) => {
  const problems = COMMANDS.flatMap((command) =>
    command.examples.flatMap((example) => simpleCommands(example.command, 0).flatMap((line) => commandProblems(`src/commands/${command.name}.ts`, line, true).map((p) => `${command.name} --help: ${example.command}: ${p}`))),
  );
  t.ok(COMMANDS.every((command) => command.examples.length > 0), 'every command has examples');
  t.same(problems, []);
});

t.test('the Node versions the docs name are the ones package.json and the image have', async (t) => {
  const engines = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
  const oldest = /\^?(\d+\.\d+)/.exec(engines)?.[1];
  const imageNode = /^ARG NODE_IMAGE=node:(\d+)/m.exec(await readFile(join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
  t.ok(oldest !== undefined && imageNode !== undefined, `engines ${engines}, image node:${imageNode}`);
  for (const doc of DOCS) {
    const text = (await readFile(join(ROOT, doc), 'utf8')).replace(/\s+/g, ' ');
    for (const m of text.matchAll(/\bNode(?:\.js)?\b[^.;]{0,40}?\b(\d\d\.\d+)(?:\+| or later)/g)) t.equal(m[1], oldest, `${doc}: "${m[0]}" names the oldest supported Node`);
    for (const m of text.matchAll(/\bimage runs (?:Node )?(\d+)/g)) t.equal(m[1], imageNode, `${doc}: "${m[0]}"`);
  }
});

t.test('the check finds each kind of drift', async (t) => {
  const found = (doc: string, markdown: string): string[] => docProblems(doc, markdown).map((p) => p.problem);
  const finds = (doc: string, markdown: string, wanted: RegExp[], what: string): void => {
    const problems = found(doc, markdown);
    for (const pattern of wanted) t.ok(problems.some((p) => pattern.test(p)), `${what}: ${pattern} in ${JSON.stringify(problems)}`);
  };
  finds('docs/x.md', '```sh\nkube-admission-server evaluate -f a.yaml --made-up\n```\n', [/--made-up: unknown flag/], 'a made-up flag');
  finds('docs/x.md', '```sh\nnode dist/src/main.js types --crd a.yaml -o src/t.ts\n```\n', [/-o: unknown flag/], 'a short flag the command lacks');
  finds('docs/x.md', '```console\n$ npx kube-admission-server test tests/ \\\n    --reachable-at 127.0.0.1\n```\n', [/--reachable-at: unknown flag/], "another command's own flag, over a continuation");
  finds('docs/x.md', '```sh\nkube-admission-server evaluate -f a.yaml --kubeconfig k  # reads no cluster\n```\n', [/--kubeconfig: not a flag of evaluate/], 'a server flag the command does not read');
  finds('docs/x.md', 'Run `kube-admission-server vet -f a.yaml`.\n', [/"vet": unknown command/], 'an unknown command in prose');
  finds('docs/x.md', '```sh\ncat a.yaml | npm start -- --prot 9443\n```\n', [/--prot: unknown flag/], 'through npm start, after a pipe');
  finds('docs/x.md', 'See `src/commands/none.ts` and `./docs/gone.md`.\n', [/src\/commands\/none\.ts: no such path/, /docs\/gone\.md: no such path/], 'paths that do not exist');
  finds('docs/x.md', '```sh\nkube-admission-server dev --handlers dist/webhooks.js --reachable-at 127.0.0.1\n```\n', [/dist\/webhooks\.js: no such path/], 'a compiled output without a source');
  finds('docs/x.md', '```sh\nnpm run made-up\n```\n', [/npm run made-up: no such script/], 'an npm script that does not exist');
  finds('scaffold/README.md', 'The handlers are in `src/handlers.ts`.\n', [/src\/handlers\.ts: no such path in a project init makes/], "a path of the scaffold's project that init does not make");
  finds('docs/x.md', '```\n$ kube-admission-server test policies/tests\n```\n', [/tag it ```console/], 'command lines in an untagged block');
  t.same(found('docs/x.md', '```sh\nkube-admission-server types --crd a.yaml --out src/t.ts   # src/t.ts is written\n```\n'), [], 'a file a command writes: only its folder must exist');
  t.same(found('docs/writing-webhooks.md', '```sh\nnpx kube-admission-server dev --handlers dist/src/webhooks.js --reachable-at 127.0.0.1\n```\n'), [], "a project's compiled handlers");
  t.same(found('docs/x.md', '`kube-admission-server dev` and `kube-admission-server <command> --help`\n'), [], 'prose may name a command without its required flags, or a placeholder for one');
});

t.test('the allowances are few, each with its reason, and the generated paths are ignored by git', async (t) => {
  t.ok(Object.keys(BROUGHT).length <= 6, 'a short list of files the reader brings');
  for (const [entry, reason] of Object.entries({ ...BROUGHT, ...GENERATED })) t.ok(reason.length > 20, `${entry}: ${reason}`);
  for (const prefix of Object.keys(GENERATED)) {
    const ignored = execFileSync('git', ['check-ignore', '--no-index', `${prefix}example`], { cwd: ROOT, encoding: 'utf8' }).trim();
    t.equal(ignored, `${prefix}example`, `${prefix} is in .gitignore`);
  }
  const flags = COMMANDS.flatMap((command) => command.flags.flatMap((flag) => flag.names));
  for (const flag of OUTPUT_FLAGS) t.ok(flags.includes(flag), `${flag} is a flag of a command`);
});
