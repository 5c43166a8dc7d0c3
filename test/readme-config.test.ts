import t from 'tap';
import { readFile } from 'node:fs/promises';
import { FLAGS } from '../src/config/flags.js';
import { renderHelp } from '../src/config/help.js';

t.test('the README configuration table matches the flags --help prints', async (t) => {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const help = renderHelp();
  const rows = readme.split('\n').filter((line) => line.startsWith('| `--'));
  t.equal(rows.length, FLAGS.length, 'one README row per flag, no stale rows');
  for (const flag of FLAGS) {
    const name = flag.kind === 'boolean' ? `\`--${flag.name}\` / \`--no-${flag.name}\`` : `\`--${flag.name}\``;
    t.ok(rows.includes(`| ${name} | \`${flag.env}\` | ${flag.defaultText} | ${flag.description} |`), `README row for --${flag.name}`);
    t.match(help, `env ${flag.env}; default: ${flag.defaultText}`, `--help line for --${flag.name}`);
  }
});

t.test('the README opens with the two commands a newcomer needs', async (t) => {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const firstBlock = readme.slice(readme.indexOf('```sh'), readme.indexOf('```', readme.indexOf('```sh') + 5));
  t.match(firstBlock, /npm ci && npm start/);
  t.match(firstBlock, /npm ci && npm run setup && npm test/, 'the test command includes the setup of tools the suite needs (scripts/setup.sh)');
});
