/**
 * What a Markdown page shows a reader to type: its fenced shell blocks (```sh, bash, shell and
 * console, whose commands are the `$ ` lines) and inline code spans, read into simple commands
 * (continuations joined, comments dropped, split at `&&`, `||`, `|` and `;`), and the
 * kube-admission-server invocations and repository paths among their words.
 */

export const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'console']);

export interface FencedBlock {
  /** The info string's first word ('' for a bare fence). */
  language: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
}

/** One simple command of a doc: its words (quotes removed) and the words it writes to (after `>`). */
export interface DocCommand {
  line: number;
  words: string[];
  outputs: string[];
}

/** Every fenced block of `markdown`, indented ones (inside list items) included. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i] as string);
    if (!open) continue;
    const [, indent = '', fence = '', language = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !(lines[j] as string).trimStart().startsWith(fence); j++) body.push((lines[j] as string).slice(indent.length));
    blocks.push({ language, line: i + 1, text: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** `markdown` with its fenced blocks blanked out (line numbers kept), for reading prose only. */
export function withoutFencedBlocks(markdown: string): string {
  const lines = markdown.split('\n');
  for (const block of fencedBlocks(markdown)) {
    const end = block.line + block.text.split('\n').length;
    for (let i = block.line - 1; i <= end && i < lines.length; i++) lines[i] = '';
  }
  return lines.join('\n');
}

/** Inline code spans of the prose (a span may wrap across lines), with the line it starts on. */
export function inlineCodeSpans(markdown: string): { line: number; text: string }[] {
  const prose = withoutFencedBlocks(markdown);
  const spans: { line: number; text: string }[] = [];
  for (const match of prose.matchAll(/(?<!`)(`+)(?!`)([\s\S]+?)(?<!`)\1(?!`)/g)) {
    const line = prose.slice(0, match.index).split('\n').length;
    spans.push({ line, text: (match[2] as string).replace(/\s+/g, ' ').trim() });
  }
  return spans;
}

type Token = { word: string } | { op: string };

const OPERATORS = ['2>&1', '&&', '||', '>>', '2>', '|', ';', '>', '<', '&', '(', ')'];

/** Shell words and operators of one logical line; a `#` at the start of a word begins a comment. */
export function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  let word: string | undefined;
  const end = (): void => {
    if (word !== undefined) tokens.push({ word });
    word = undefined;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "'" || c === '"') {
      const close = line.indexOf(c, i + 1);
      const stop = close < 0 ? line.length : close;
      word = (word ?? '') + line.slice(i + 1, stop);
      i = stop;
    } else if (c === '\\') {
      word = (word ?? '') + (line[i + 1] ?? '');
      i++;
    } else if (/\s/.test(c)) {
      end();
    } else if (c === '#' && word === undefined) {
      break;
    } else if (c === '$' && (line[i + 1] === '(' || line[i + 1] === '{')) {
      // $(command) and ${VAR:-default} stay one word.
      const close = line.indexOf(line[i + 1] === '(' ? ')' : '}', i);
      const stop = close < 0 ? line.length - 1 : close;
      word = (word ?? '') + line.slice(i, stop + 1);
      i = stop;
    } else if (c === '<' && /^<[A-Za-z][\w.-]*>/.test(line.slice(i))) {
      // A placeholder such as <release>, not a redirection.
      const stop = line.indexOf('>', i);
      word = (word ?? '') + line.slice(i, stop + 1);
      i = stop;
    } else {
      const op = OPERATORS.find((o) => line.startsWith(o, i) && (!o.startsWith('2') || word === undefined));
      if (op !== undefined) {
        end();
        tokens.push({ op });
        i += op.length - 1;
      } else {
        word = (word ?? '') + c;
      }
    }
  }
  end();
  return tokens;
}

/** The simple commands of one line of shell (the redirection targets apart: they are written, not read). */
export function simpleCommands(text: string, line: number): DocCommand[] {
  const commands: DocCommand[] = [];
  let current: DocCommand = { line, words: [], outputs: [] };
  let redirect: string | undefined;
  for (const token of tokenize(text)) {
    if ('word' in token) {
      if (redirect === undefined) current.words.push(token.word);
      else if (redirect === '<') current.words.push(token.word);
      else current.outputs.push(token.word);
      redirect = undefined;
    } else if (['>', '>>', '2>', '<'].includes(token.op)) {
      redirect = token.op;
    } else if (token.op !== '2>&1') {
      if (current.words.length > 0) commands.push(current);
      current = { line, words: [], outputs: [] };
    }
  }
  if (current.words.length > 0) commands.push(current);
  return commands;
}

/** The commands of a shell block: `\` continuations joined; in a console block only the `$ ` lines. */
export function blockCommands(block: FencedBlock): DocCommand[] {
  const lines = block.text.split('\n');
  const commands: DocCommand[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = i;
    let text = lines[i] as string;
    if (block.language === 'console') {
      if (!text.startsWith('$ ')) continue;
      text = text.slice(2);
    }
    while (/(^|[^\\])\\$/.test(text) && i + 1 < lines.length) text = `${text.slice(0, -1)} ${lines[++i] as string}`;
    commands.push(...simpleCommands(text, block.line + 1 + first));
  }
  return commands;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * The arguments a command line gives kube-admission-server, or undefined when it runs something
 * else: `kube-admission-server`, `npx kube-admission-server`, `node [node flags] dist/src/main.js`
 * (or the package's bin), `node_modules/.bin/kube-admission-server`, `npm start -- ...`.
 */
export function invocationArgs(words: readonly string[]): string[] | undefined {
  let rest = [...words];
  while (rest.length > 0 && ASSIGNMENT.test(rest[0] as string)) rest = rest.slice(1);
  const [head, ...args] = rest;
  if (head === undefined) return undefined;
  const isBinary = (word: string): boolean => word === 'kube-admission-server' || word.endsWith('/.bin/kube-admission-server') || /(^|\/)dist\/src\/main\.js$/.test(word);
  if (isBinary(head)) return args;
  if (head === 'npx' && args[0] === 'kube-admission-server') return args.slice(1);
  if (head === 'node') {
    const entry = args.findIndex((arg) => !arg.startsWith('-'));
    return entry >= 0 && isBinary(args[entry] as string) ? args.slice(entry + 1) : undefined;
  }
  if (head === 'npm' && args[0] === 'start') return args[1] === '--' ? args.slice(2) : [];
  return undefined;
}
