// docs/configuration.md's flag table is generated from the flag list that --help and parsing read
// (src/config/flags.ts): the file holds exactly the current rendering, and that rendering has one
// row per flag with what --help prints for it, so neither can drift.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { FLAGS } from '../src/config/flags.js';
import { renderHelp } from '../src/config/help.js';
import { CONFIGURATION_DOC, renderFlagTable, withGeneratedBlocks } from '../scripts/docs-tables.js';

const doc = await readFile(new URL(`../${CONFIGURATION_DOC}`, import.meta.url), 'utf8');

t.equal(doc, withGeneratedBlocks(doc), `${CONFIGURATION_DOC} holds the current generated tables (run npm run docs:tables)`);

t.test('the flag table has one row per flag, each with what --help prints', async (t) => {
  const help = renderHelp();
  const rows = doc.split('\n').filter((line) => line.startsWith('| `--'));
  t.equal(rows.length, FLAGS.length, 'one row per flag, no stale rows');
  for (const flag of FLAGS) {
    const name = flag.kind === 'boolean' ? `\`--${flag.name}\` / \`--no-${flag.name}\`` : `\`--${flag.name}\``;
    const row = rows.find((r) => r.startsWith(`| ${name} |`));
    t.ok(row, `a row for --${flag.name}`);
    const cells = (row ?? '').split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim().replaceAll('\\<', '<').replaceAll('\\|', '|'));
    t.same(cells.slice(1), [`\`${flag.env}\``, flag.defaultText, flag.description], `--${flag.name}: env, default and description`);
    t.match(help, `env ${flag.env}; default: ${flag.defaultText}`, `--help line for --${flag.name}`);
  }
});

t.test('a stale table is caught and rewritten', async (t) => {
  const stale = doc.replace('| `--port` | `WEBHOOK_PORT` | 8443 |', '| `--port` | `WEBHOOK_PORT` | 9443 |');
  t.not(stale, doc, 'the fixture changed a row');
  t.not(withGeneratedBlocks(stale), stale);
  t.equal(withGeneratedBlocks(stale), doc);
  t.ok(renderFlagTable().includes('| `--port` | `WEBHOOK_PORT` | 8443 |'));
  t.throws(() => withGeneratedBlocks('# no markers\n'), /markers of the generated block "flags" are missing/);
});
