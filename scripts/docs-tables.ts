/**
 * The reference tables of docs/configuration.md, generated from the lists the binary itself
 * reads (src/config/flags.ts, src/commands/), so the docs and `--help` cannot drift. `npm run docs:tables`
 * writes them; test/docs-configuration.test.ts fails when the file holds anything else.
 */
import { COMMANDS } from '../src/commands/index.js';
import { FLAGS } from '../src/config/flags.js';

export const CONFIGURATION_DOC = 'docs/configuration.md';

/** One generated block: its marker name and its Markdown. */
export interface GeneratedBlock {
  name: string;
  render(): string;
}

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('<', '\\<');

/** The flag table: one row per flag, as `--help` lists them. */
export function renderFlagTable(): string {
  const rows = FLAGS.map((flag) => {
    const name = flag.kind === 'boolean' ? `\`--${flag.name}\` / \`--no-${flag.name}\`` : `\`--${flag.name}\``;
    return `| ${name} | \`${flag.env}\` | ${cell(flag.defaultText)} | ${cell(flag.description)} |`;
  });
  return ['| flag | env | default | what |', '|---|---|---|---|', ...rows].join('\n');
}

/** The command table: what each command does, its own flags and the server flags it reads, as `<command> --help` shows them. */
export function renderCommandTable(): string {
  const rows = COMMANDS.map((command) => {
    const own = command.flags.map((flag) => `\`${flag.names.join('`/`')}${flag.value ? ` ${flag.value}` : ''}\``).join(', ') || 'none';
    const server = command.serverFlags === 'all' ? 'all' : command.serverFlags.map((name) => `\`--${name}\``).join(', ');
    return `| \`${command.name}\` | ${cell(command.summary)} | ${cell(own)} | ${server} |`;
  });
  return ['| command | what | its own flags | server flags it reads |', '|---|---|---|---|', ...rows].join('\n');
}

export const GENERATED_BLOCKS: readonly GeneratedBlock[] = [
  { name: 'flags', render: renderFlagTable },
  { name: 'commands', render: renderCommandTable },
];

const start = (name: string): string => `<!-- generated: ${name} (npm run docs:tables) -->`;
const end = (name: string): string => `<!-- end: ${name} -->`;

/** The text with every generated block replaced by its current rendering; throws on a missing marker. */
export function withGeneratedBlocks(text: string, blocks: readonly GeneratedBlock[] = GENERATED_BLOCKS): string {
  let result = text;
  for (const block of blocks) {
    const from = result.indexOf(start(block.name));
    const to = result.indexOf(end(block.name));
    if (from < 0 || to < from) throw new Error(`${CONFIGURATION_DOC}: the markers of the generated block "${block.name}" are missing`);
    result = `${result.slice(0, from)}${start(block.name)}\n${block.render()}\n${result.slice(to)}`;
  }
  return result;
}
