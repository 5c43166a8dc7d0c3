// docs/getting-started.md's "Try it on the local cluster" shows exactly the commands `npm run
// local-cluster` prints (and the end-to-end tests run), the README's short version is a selection
// of them, every file they name exists, and the policy they apply is the shipped one with the
// changes its comment names.
import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { TRY_IT, renderTryIt } from '../local-cluster/cluster/try-it.js';

const shBlocks = (file: string, heading: string): string[] => {
  const text = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
  const end = text.indexOf('\n## ', start + heading.length + 2);
  const section = text.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? '');
};

const walkThrough = shBlocks('docs/getting-started.md', '## Try it on the local cluster');
t.equal(walkThrough[1], renderTryIt(), 'the second sh block of the walk-through is the printed one, verbatim');
t.match(walkThrough[0], /^npm ci && npm run local-cluster\b/m);

t.test("the README's short version: the start, then printed commands only, in their order", async (t) => {
  const [block = ''] = shBlocks('README.md', '## Try it on the local cluster');
  const [start, ...lines] = block.split('\n').map((line) => line.replace(/\s+#.*$/, ''));
  t.equal(start, 'npm ci && npm run local-cluster');
  t.ok(lines.length >= 4, 'install, wait, look and uninstall at least');
  const printed = TRY_IT.map((step) => step.command);
  let from = 0;
  for (const line of lines) {
    const at = printed.indexOf(line, from);
    t.ok(at >= 0, `"${line}" is a printed command, after the previous one`);
    from = at + 1;
  }
  for (const id of ['install', 'uninstall']) t.ok(lines.includes(TRY_IT.find((s) => s.id === id)?.command ?? '?'), `the short version has the ${id} step`);
});
const scripts = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;
t.equal(scripts['local-cluster'], 'npm run build && node dist/local-cluster/cli/local-cluster.js');
for (const step of TRY_IT) {
  for (const file of step.command.match(/(?:examples|manifests)\/[\w./-]+/g) ?? []) {
    t.ok(existsSync(new URL(`../${file}`, import.meta.url)), `${file} (${step.id}) exists`);
  }
}
t.equal(new Set(TRY_IT.map((s) => s.id)).size, TRY_IT.length, 'step ids are unique');

t.test('the example policy is the shipped one, deny-privileged moved to enforce, default-labels added', async (t) => {
  type Entry = { name: string; mode?: string };
  const shipped = parse(readFileSync(new URL('../manifests/base/policy.yaml', import.meta.url), 'utf8')) as { webhooks: Entry[] };
  const configMap = parse(readFileSync(new URL('../examples/local-cluster/policy-with-default-labels.yaml', import.meta.url), 'utf8')) as { data: Record<string, string> };
  const example = parse(configMap.data['policy.yaml'] ?? '') as { webhooks: Entry[] };
  t.equal(shipped.webhooks.find((w) => w.name === 'deny-privileged')?.mode, 'warn', 'shipped: warn first');
  const expected = {
    ...shipped,
    webhooks: [
      ...shipped.webhooks.map((w) => (w.name === 'deny-privileged' ? { ...w, mode: 'enforce' } : w)),
      { name: 'default-labels', kind: 'defaultLabels', params: { labels: { 'kube-admission-server/defaulted': 'true' } } },
    ],
  };
  t.same(example, expected);
});
