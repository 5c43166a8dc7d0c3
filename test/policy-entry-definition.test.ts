/**
 * An entry's definition: what decides its answers apart from its name. A rule renamed and nothing
 * else keeps its definition (a replica may answer the old name with it); any other difference, a
 * parameter, a mode, the namespaces the handler leaves alone, gives another. Checked on policy
 * files as written, and on what the two entries answer.
 */
import t from 'tap';
import { entryDefinitions } from '../src/policy/entry-definition.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import type { PolicyEntry } from '../src/policy/policy.js';
import type { ValidatingWebhook } from '../src/admission/types.js';
import { admissionRequest, pod, review } from './support/policy/policy-fixtures.js';

const HEADER = 'apiVersion: kube-admission-server/v1\nkind: Policy\n';

function entriesOf(text: string, ownNamespace?: string): { entries: PolicyEntry[]; webhooks: ValidatingWebhook[] } {
  const result = parsePolicy(HEADER + text, 'p.yaml', ownNamespace ? { ownNamespace } : {});
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return { entries: result.policy.entries, webhooks: result.webhooks as ValidatingWebhook[] };
}

const requireTeam = (name: string, extra = '') => `  - name: ${name}\n    kind: requireLabels\n${extra}    params:\n      labels:\n        - key: team\n`;
const definitionOf = (text: string, name: string, ownNamespace?: string): string | undefined =>
  entriesOf(text, ownNamespace).entries.find((e) => e.spec.name === name)?.definition;

t.test('a rename keeps the definition; the two answer alike', async (t) => {
  const before = entriesOf(`webhooks:\n${requireTeam('require-team')}`);
  const after = entriesOf(`webhooks:\n${requireTeam('require-team-r1')}`);
  t.match(before.entries[0]?.definition, /^sha256:[0-9a-f]{32}$/);
  t.equal(after.entries[0]?.definition, before.entries[0]?.definition, 'the same definition under another name');
  const withoutTeam = admissionRequest(pod({ containers: [{ name: 'app', image: 'nginx' }] }, { app: 'web' }));
  const answers = await Promise.all([before.webhooks[0]!, after.webhooks[0]!].map(async (w) => (await review(w, withoutTeam)).allowed));
  t.same(answers, [false, false], 'both deny the Pod without a team label');
  t.same(
    [...entryDefinitions(after.entries)],
    [['validating/require-team-r1', before.entries[0]?.definition]],
    'listed by type and name',
  );
});

t.test('any other difference is another definition', async (t) => {
  const base = definitionOf(`webhooks:\n${requireTeam('r')}`, 'r');
  const variants = {
    'another parameter': definitionOf(`webhooks:\n  - name: r\n    kind: requireLabels\n    params:\n      labels:\n        - key: owner\n`, 'r'),
    'another mode': definitionOf(`webhooks:\n${requireTeam('r', '    mode: warn\n')}`, 'r'),
    'a default spelled out': definitionOf(`webhooks:\n${requireTeam('r', '    mode: enforce\n')}`, 'r'),
    'another timeout': definitionOf(`webhooks:\n${requireTeam('r', '    timeoutSeconds: 6\n')}`, 'r'),
    'other excluded namespaces': definitionOf(`excludedNamespaces: [kube-system, team-b]\nwebhooks:\n${requireTeam('r')}`, 'r'),
    'another own namespace': definitionOf(`webhooks:\n${requireTeam('r')}`, 'r', 'ops'),
  };
  for (const [what, definition] of Object.entries(variants)) t.not(definition, base, what);
  t.equal(definitionOf(`webhooks:\n${requireTeam('r')}`, 'r'), base, 'the same text, the same definition');
  t.equal(definitionOf(`webhooks:\n  - params:\n      labels:\n        - key: team\n    kind: requireLabels\n    name: r\n`, 'r'), base, 'keys in another order: the same');
});
