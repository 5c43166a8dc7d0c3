// The README's "Try it on a local cluster" shows exactly the commands `npm run local-cluster`
// prints (and the end-to-end tests run), every file they name exists, and the policy they apply
// is the shipped one with the changes its comment names.
import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { TRY_IT, renderTryIt } from '../local-cluster/cluster/try-it.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('## Try it on a local cluster'));
const blocks = [...section.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]);

t.equal(blocks[1], renderTryIt(), 'the second sh block of the section is the printed one, verbatim');
t.match(blocks[0], /^npm ci && npm run local-cluster\b/m);
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
