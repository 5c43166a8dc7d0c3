import t from 'tap';
import type { WebhookConfiguration } from '../src/registration/configuration-api.js';
import { MatchConditionsGate } from '../src/registration/match-conditions-gate.js';
import { parseServerVersion, type ServerVersion } from '../src/kube/server-version.js';
import { captureLogs } from './support/server/server-harness.js';

type Hook = { name: string; rules?: unknown[]; matchConditions?: { name: string; expression: string }[]; clientConfig: { caBundle: string; service: { path: string } } };

const hook = (name: string, options: { conditions?: boolean; caBundle?: string; resources?: string[] } = {}): Hook => ({
  name,
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: options.resources ?? ['pods'] }],
  clientConfig: { caBundle: options.caBundle ?? 'TkVX', service: { path: `/validate/${name}` } },
  ...(options.conditions ? { matchConditions: [{ name: 'c', expression: 'true' }] } : {}),
});
const configuration = (webhooks: Hook[]): WebhookConfiguration =>
  ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'kas' }, webhooks }) as unknown as WebhookConfiguration;
const v = (minor: string, gitVersion = `v1.${minor}.3`): ServerVersion => parseServerVersion({ major: '1', minor, gitVersion })!;
const names = (c: WebhookConfiguration): string[] => (c.webhooks ?? []).map((w) => w.name);

t.test('versions as kube-apiserver and managed offerings report them', async (t) => {
  t.same(parseServerVersion({ major: '1', minor: '27+', gitVersion: 'v1.27.16-eks-2f008fe' }), { major: 1, minor: 27, gitVersion: 'v1.27.16-eks-2f008fe' });
  t.same(parseServerVersion({ major: '1', minor: '35' }), { major: 1, minor: 35, gitVersion: 'v1.35' });
  t.equal(parseServerVersion({ major: '', minor: '' }), undefined);
});

t.test('below 1.28 a webhook with matchConditions keeps its live entry (caBundle current) or stays out; the rest is as desired', async (t) => {
  const logs = captureLogs();
  const gate = new MatchConditionsGate(logs.logger);
  gate.setVersion(v('27', 'v1.27.3'));
  const live = configuration([hook('a', { caBundle: 'T0xE', resources: ['pods'] }), hook('b', { caBundle: 'T0xE' })]);
  const desired = configuration([hook('a', { conditions: true, resources: ['pods', 'services'] }), hook('b', { resources: ['configmaps'] }), hook('c', { conditions: true })]);
  const prepared = gate.prepare(desired, live);
  t.same(names(prepared), ['a', 'b'], 'c, new and conditional, is left out; order kept');
  const [a, b] = prepared.webhooks as unknown as Hook[];
  t.same(a!.rules, live.webhooks![0]!.rules, 'a keeps what the previous policy registered');
  t.notOk(a!.matchConditions, 'and is not written with conditions the API server would drop');
  t.equal(a!.clientConfig.caBundle, 'TkVX', 'but its caBundle follows the CA');
  t.same(b, desired.webhooks![1], 'b, without conditions, is reconciled to the new version');
  t.match(logs.lines.at(-1), {
    level: 50,
    kind: 'validating',
    withheld: [{ name: 'a', instead: 'kept' }, { name: 'c', instead: 'left-out' }],
    msg: /^kube-apiserver v1\.27\.3 drops matchConditions \(they need Kubernetes 1\.28 or later\), so validating a, validating c would match more/,
  });

  const logged = logs.lines.length;
  gate.prepare(desired, live);
  t.equal(logs.lines.length, logged, 'the same withholding is logged once, not at every pass');
  const restored = gate.prepare(desired, undefined);
  t.same(names(restored), ['a', 'b'], 'a deleted configuration is restored with the kept entry, and without c');
  t.same((restored.webhooks as unknown as Hook[])[0]!.rules, live.webhooks![0]!.rules, 'as it was');
  const fresh = new MatchConditionsGate(captureLogs().logger);
  fresh.setVersion(v('27'));
  t.same(names(fresh.prepare(desired, undefined)), ['b'], 'a process that never saw them registers neither');
  gate.prepare(configuration([hook('b')]), live);
  t.match(logs.lines.at(-1), { level: 30, msg: 'no webhook withheld for its matchConditions any more' });
});

t.test('from 1.28 on, or before the version is known, nothing is withheld', async (t) => {
  const logs = captureLogs();
  const gate = new MatchConditionsGate(logs.logger);
  const desired = configuration([hook('a', { conditions: true })]);
  t.equal(gate.prepare(desired, undefined), desired, 'version not read yet');
  gate.setVersion(v('28'));
  t.equal(gate.prepare(desired, undefined), desired);
  gate.setVersion(parseServerVersion({ major: '2', minor: '0' })!);
  t.equal(gate.prepare(desired, undefined), desired);
  gate.setVersion(v('27'));
  t.same(names(gate.prepare(configuration([hook('b')]), undefined)), ['b'], 'nothing to withhold');
  t.same(logs.lines, [], 'and nothing to say');
});
