// The link check that CI runs over every Markdown file (`npm run docs:links`: remark-cli with
// remark-validate-links, configured in .remarkrc.json) fails on each kind of broken link and
// passes on good ones, so a green check means something.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { cleanEnvironment, runCommand } from './support/tools/run-command.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const remark = join(root, 'node_modules/.bin/remark');

async function checkLinks(files: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-links-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(dir, path, '..'), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    // The repository's own settings and flags, on a folder of its own.
    const args = ['--rc-path', join(root, '.remarkrc.json'), '--frail', '--quiet', '--no-stdout', '--no-color', '.'];
    const result = await runCommand(remark, args, { cwd: dir, env: cleanEnvironment(), timeoutMs: 120_000, allowFailure: true });
    return { code: result.code, output: result.stdout + result.stderr };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const good = {
  'README.md': '# Top\n\n[guide](docs/guide.md), [its part](docs/guide.md#a-part), [here](#top), [a file](policy.yaml)\n',
  'docs/guide.md': '# Guide\n\n## A part\n\nBack to the [README](../README.md#top).\n',
  'policy.yaml': 'webhooks: []\n',
};

t.test('good links pass', async (t) => {
  const result = await checkLinks(good);
  t.equal(result.code, 0, result.output);
});

t.test('each kind of broken link fails the check and is named', async (t) => {
  const result = await checkLinks({
    ...good,
    'README.md': '# Top\n\n[gone](docs/missing.md), [no such part](docs/guide.md#no-part), [no anchor](#nowhere), [no file](policies/none.yaml)\n',
  });
  t.not(result.code, 0, 'the check fails');
  t.match(result.output, /docs\/missing\.md/, 'a missing file');
  t.match(result.output, /#no-part/, 'a missing heading in another file');
  t.match(result.output, /#nowhere/, 'a missing heading in the same file');
  t.match(result.output, /policies\/none\.yaml/, 'a missing file that is not Markdown');
});
