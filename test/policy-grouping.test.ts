/**
 * Grouped registration: which entries share a webhook, what the group is registered with, its
 * name and its path. Checked against the API double's own validation of webhook configurations
 * (kube-apiserver's rules, written outside src/) where the question is "would kube-apiserver take it".
 */
import t from 'tap';
import { validateWebhookConfiguration } from '../local-cluster/fake-apiserver/webhook-validation.js';
import { desiredConfigurations } from '../src/registration/desired-configurations.js';
import { groupFailurePolicy, groupKey, groupName } from '../src/webhooks/group-key.js';
import { entryKey, membersPath, parseMembersPath, parseWebhookPath, routedEntries } from '../src/webhooks/group-path.js';
import { groupWebhooks, registeredWebhooks } from '../src/webhooks/grouping.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import { webhookPath } from '../src/webhooks/group-path.js';
import type { Webhook, WebhookSpec } from '../src/admission/types.js';
import { mutating, validating } from './support/server/server-harness.js';

const allow = () => ({ allowed: true as const });
const pods = (operations: ('CREATE' | 'UPDATE')[] = ['CREATE']) => [{ operations, apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
const deployments = [{ operations: ['CREATE' as const], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }];

const names = (groups: readonly { name: string; members: readonly Webhook[] }[]) => groups.map((g) => [g.name, g.members.map((m) => m.name)]);

/** kube-apiserver's validation of the configurations registration would write for `specs` (the double's rules). */
function apiServerProblems(specs: readonly WebhookSpec[]): string[] {
  const desired = desiredConfigurations({ configName: 'kas', serviceName: 'kas', namespace: 'kas', caBundlePem: 'x', webhooks: specs, excludedNamespaces: ['kube-system'] });
  return [
    ...validateWebhookConfiguration(desired.mutating as never, true),
    ...validateWebhookConfiguration(desired.validating as never, false),
  ].map((error) => `${error.field}: ${error.detail ?? ''}`);
}

t.test('entries kube-apiserver treats alike share one webhook; a different failurePolicy, type, timeout class or dry-run behaviour does not', async (t) => {
  const webhooks = [
    validating('require-team', allow, { failurePolicy: 'Fail', timeoutSeconds: 5 }),
    validating('warn-owner', allow, { failurePolicy: 'Ignore', timeoutSeconds: 5 }),
    validating('deny-privileged', allow, { failurePolicy: 'Fail', timeoutSeconds: 3 }),
    validating('slow-check', allow, { failurePolicy: 'Fail', timeoutSeconds: 8 }),
    validating('dry-run-aware', allow, { failurePolicy: 'Fail', timeoutSeconds: 5, sideEffects: 'NoneOnDryRun' }),
    validating('exact-only', allow, { failurePolicy: 'Fail', timeoutSeconds: 5, matchPolicy: 'Exact' }),
    mutating('default-labels', allow, { failurePolicy: 'Ignore', timeoutSeconds: 5 }),
    mutating('default-resources', allow, { failurePolicy: 'Ignore', timeoutSeconds: 2 }),
    mutating('reinvoked', allow, { failurePolicy: 'Ignore', timeoutSeconds: 5, reinvocationPolicy: 'IfNeeded' }),
    validating('late-rule', allow, { failurePolicy: 'Fail', timeoutSeconds: 30 }),
  ];
  const groups = groupWebhooks(webhooks);
  t.same(names(groups), [
    ['validating-fail-t5', ['require-team', 'deny-privileged']],
    ['validating-ignore-t5', ['warn-owner']],
    ['validating-fail-t10', ['slow-check']],
    ['validating-fail-t5-dryrun', ['dry-run-aware']],
    ['validating-fail-t5-exact', ['exact-only']],
    ['mutating-ignore-t5', ['default-labels', 'default-resources']],
    ['mutating-ignore-t5-reinvoke', ['reinvoked']],
    ['validating-fail-t30', ['late-rule']],
  ]);
  t.same(
    groups.map((g) => [g.type, g.failurePolicy, g.timeoutSeconds]),
    [
      ['validating', 'Fail', 5],
      ['validating', 'Ignore', 5],
      ['validating', 'Fail', 8],
      ['validating', 'Fail', 5],
      ['validating', 'Fail', 5],
      ['mutating', 'Ignore', 5],
      ['mutating', 'Ignore', 5],
      ['validating', 'Fail', 30],
    ],
    "registered with the members' failurePolicy and the slowest member's timeout",
  );
  t.same(apiServerProblems(groups), [], 'kube-apiserver takes the configurations');
});

t.test("a group's name comes from its key alone: members added, removed or reordered keep it", async (t) => {
  const a = validating('a', allow);
  const b = validating('b', allow, { rules: deployments });
  const c = validating('c', allow, { timeoutSeconds: 7 });
  const before = groupWebhooks([a, b]).map((g) => g.name);
  t.same(groupWebhooks([b, a, c]).map((g) => g.name), before, 'reordered, one added');
  t.same(groupWebhooks([c]).map((g) => g.name), before, 'others removed');
  t.equal(groupName(groupKey(a)), 'validating-fail-t10');
  t.equal(groupFailurePolicy('validating-fail-t10'), 'Fail', 'the failurePolicy reads back from the name');
  t.equal(groupFailurePolicy('mutating-ignore-t5-reinvoke'), 'Ignore');
  t.equal(groupFailurePolicy('require-team'), undefined, 'an entry name is no group');
});

t.test('the registered rules are the union of the members’, each once', async (t) => {
  const [group] = groupWebhooks([validating('a', allow, { rules: pods() }), validating('b', allow, { rules: [...deployments, ...pods()] }), validating('c', allow, { rules: pods(['CREATE', 'UPDATE']) })]);
  t.same(group!.rules, [...pods(), ...deployments, ...pods(['CREATE', 'UPDATE'])]);
});

t.test('selectors and matchConditions all members share stay in the registration; differing ones are left to the server', async (t) => {
  const team = { matchLabels: { team: 'a' } };
  const conditions = [{ name: 'not-dry', expression: '!request.dryRun' }];
  const [same] = groupWebhooks([validating('a', allow, { objectSelector: team, matchConditions: conditions }), validating('b', allow, { objectSelector: team, matchConditions: conditions })]);
  t.same({ objectSelector: same!.objectSelector, matchConditions: same!.matchConditions, shared: same!.shared }, { objectSelector: team, matchConditions: conditions, shared: { namespaceSelector: true, objectSelector: true, matchConditions: true } });

  const [mixed] = groupWebhooks([validating('a', allow, { objectSelector: team, matchConditions: conditions }), validating('b', allow)]);
  t.equal(mixed!.objectSelector, undefined, 'no objectSelector registered: b wants every object');
  t.equal(mixed!.matchConditions, undefined);
  t.same(mixed!.shared, { namespaceSelector: true, objectSelector: false, matchConditions: false });
  t.same(mixed!.members.map((m) => m.objectSelector), [team, undefined], 'each member keeps its own, for the server');
});

t.test('what the server cannot decide from the request stays in the registration, so it splits groups', async (t) => {
  const byName = (entries: string[]) => ({ matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In' as const, values: entries }] });
  const prod = { matchLabels: { env: 'prod' } };
  const groups = groupWebhooks([
    validating('only-team-a', allow, { namespaceSelector: byName(['team-a']) }),
    validating('only-team-b', allow, { namespaceSelector: byName(['team-b']) }),
    validating('prod-1', allow, { namespaceSelector: prod }),
    validating('prod-2', allow, { namespaceSelector: prod }),
    validating('staging', allow, { namespaceSelector: { matchLabels: { env: 'staging' } } }),
    validating('asks-authorizer', allow, { matchConditions: [{ name: 'can', expression: "authorizer.group('').resource('pods').check('get').allowed()" }] }),
    validating('every-version', allow, { rules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['*'], resources: ['deployments'] }] }),
  ]);
  t.equal(groups.length, 5, 'namespace names only: one group; env=prod: another; env=staging, authorizer, other versions: one each');
  t.same(groups[0]!.members.map((m) => m.name), ['only-team-a', 'only-team-b'], 'the namespace name is in the request: the server decides');
  t.equal(groups[0]!.namespaceSelector, undefined, 'and the registration leaves the differing selectors out');
  t.same(groups[1]!.members.map((m) => m.name), ['prod-1', 'prod-2']);
  t.same(groups[1]!.namespaceSelector, prod, 'namespace labels are kube-apiserver’s to check: registered');
  t.ok(groups.slice(1).every((g) => /^validating-fail-t10-[0-9a-f]{10}$/.test(g.name)), 'pinned matching gives the name a digest');
  t.equal(new Set(groups.map((g) => g.name)).size, groups.length, 'distinct names');
  t.same(apiServerProblems(groups), []);
});

t.test('the path names the members in order; a long list is cut into valid segments and reads back', async (t) => {
  const many = Array.from({ length: 30 }, (_, i) => validating(`rule-number-${i}-with-a-longer-name`, allow));
  const [group] = groupWebhooks(many);
  const path = webhookPath(group!);
  t.ok(path.startsWith('/validate/validating-fail-t10/rule-number-0-with-a-longer-name.rule-number-1-with-a-longer-name.'));
  const segments = path.split('/').slice(1);
  t.ok(segments.length > 3, `${segments.length} segments`);
  t.ok(segments.every((s) => s.length <= 253), 'each at most 253 characters');
  t.same(parseWebhookPath(path), { type: 'validating', name: 'validating-fail-t10', members: many.map((m) => m.name) });
  t.same(routedEntries(path).slice(0, 2), [entryKey('validating', many[0]!.name), entryKey('validating', many[1]!.name)]);
  t.same(routedEntries('/validate/require-team'), ['validating/require-team']);
  t.same(routedEntries('/healthz'), []);
  t.same(parseMembersPath('a..b'), undefined, 'an empty name is no member list');
  t.same(parseMembersPath(membersPath(['a', 'b'])), ['a', 'b']);
  t.same(apiServerProblems([group!]), [], 'kube-apiserver takes the path');
});

t.test('grouping none registers each entry as it is', async (t) => {
  const webhooks = [validating('a', allow), validating('b', allow)];
  t.equal(registeredWebhooks(webhooks, 'none'), webhooks);
  t.same(registeredWebhooks(webhooks, 'auto').map(webhookPath), ['/validate/validating-fail-t10/a.b']);
});

t.test('the policy file says how its entries are grouped', async (t) => {
  const text = (grouping: string) => `apiVersion: kube-admission-server/v1\nkind: Policy\n${grouping}webhooks: []\n`;
  const read = (grouping: string) => {
    const result = parsePolicy(text(grouping), 'policy.yaml');
    return result.ok ? result.policy.grouping : result.errors;
  };
  t.equal(read('grouping: auto\n'), 'auto');
  t.equal(read('grouping: none\n'), 'none');
  t.same(read('grouping: some\n'), ['policy.yaml:3:11: grouping: must be one of auto, none, got "some"']);
});
