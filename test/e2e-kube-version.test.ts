// matchConditions need kube-apiserver 1.28 or later; an older one drops them and the webhook
// silently matches more. The compiled server reads /version from the API double at start. A
// webhook whose new version has matchConditions is withheld there: its registered entry stays as
// the previous policy wrote it, one never registered stays out, and everything else reconciles
// (new webhooks, restores, caBundle), at a reload as at a start. On 1.28 they are registered.
// Grouped, a member's matchConditions are decided by the server and not registered; a group
// registers conditions only when every member has exactly those, and is then withheld as a whole,
// which is what withholding each of its members would be.
import t, { type Test } from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness, NAME, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';

const CONDITION = "      - { name: not-admin, expression: \"request.userInfo.username != 'system:admin'\" }";
const POLICY = (withConditions: boolean, extra: string[] = [], grouping: 'auto' | 'none' = 'none'): string =>
  [
    'apiVersion: kube-admission-server/v1',
    'kind: Policy',
    `grouping: ${grouping}`,
    'webhooks:',
    '  - name: deny-privileged',
    '    kind: denyPrivileged',
    '  - name: require-team',
    '    kind: requireLabels',
    '    params: { labels: [{ key: team }] }',
    ...(withConditions ? ['    matchConditions:', CONDITION] : []),
    ...extra,
    '',
  ].join('\n');
const REQUIRE_OWNER = ['  - name: require-owner', '    kind: requireLabels', '    params: { labels: [{ key: owner }] }'];

type Stored = { webhooks: { name: string; rules: unknown[]; matchConditions?: unknown[]; clientConfig: { caBundle: string } }[] };
const entry = (cluster: ClusterHarness, prefix: string) => cluster.configuration<Stored>('validating')?.webhooks.find((w) => w.name.startsWith(`${prefix}.`));
const withheldLog = /^kube-apiserver v1\.27\.16-eks-2f008fe drops matchConditions \(they need Kubernetes 1\.28 or later\), so validating require-team\.kube-admission-server\.kas\.svc would match more/;

async function policyFile(t: Test, withConditions: boolean, extra: string[] = [], grouping: 'auto' | 'none' = 'none'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-version-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'policy.yaml');
  await writeFile(file, POLICY(withConditions, extra, grouping));
  return file;
}

t.test('kube-apiserver 1.27: a reload that adds matchConditions keeps the registered entry, reconciles the rest; a restart keeps it too', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.27.16-eks-2f008fe' });
  cluster.seedDeployment(['kas-a', 'kas-b']);
  const volume = new AtomicWriter(join(cluster.dir, 'policy-volume'));
  await volume.write({ 'policy.yaml': POLICY(false) });
  const args = ['--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml')];
  const a = await cluster.startReplica(t, 'kas-a', args, { WATCH_POLL_INTERVAL: '500ms' });
  const before = structuredClone(entry(cluster, 'require-team'));
  t.ok(before, 'require-team registered without conditions');

  await volume.write({ 'policy.yaml': POLICY(true, REQUIRE_OWNER) });
  await a.child.waitForMessage('policy reloaded', EVENT_MS);
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, () => entry(cluster, 'require-owner') !== undefined, { timeoutMs: EVENT_MS });
  t.pass('the new webhook without conditions is registered: the pass went through');
  // The line is logged before the write, but reaches this process through a pipe: wait for it.
  t.match(await a.child.waitForLog((l) => withheldLog.test(l.msg), EVENT_MS), { level: 'error', withheld: [{ name: /^require-team\./, instead: 'kept' }] });
  t.same(entry(cluster, 'require-team'), before, 'require-team stays exactly as registered, not widened');
  t.notOk(a.child.logs.some((l) => l.msg === 'reconcile failed; retrying at the next trigger or resync'), 'no pass failed');

  // Restores go on: the mutating configuration deleted is put back, the validating one with the kept entry.
  const deletedAt = a.child.logs.length;
  cluster.api.store.delete('mutatingwebhookconfigurations', undefined, NAME);
  cluster.api.store.delete('validatingwebhookconfigurations', undefined, NAME);
  for (const kind of ['mutating', 'validating']) {
    await a.child.waitForLog((l) => a.child.logs.indexOf(l) >= deletedAt && l.msg === 'webhook configuration restored: it was deleted' && l['kind'] === kind, EVENT_MS);
  }
  t.same(entry(cluster, 'require-team'), { ...before, clientConfig: entry(cluster, 'require-team')?.clientConfig }, 'restored as it was');
  const caller = cluster.caller(t, () => a.port);
  const unlabelled = await caller.admit({ operation: 'CREATE', object: podFixture({ owner: 'me' }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(unlabelled.allowed, false, 'require-team is still enforced through the kept entry');
  if (!unlabelled.allowed) t.match(unlabelled.status.message, /require-team/);

  // A new leader (a rollout after the edit) starts with the new file: it keeps the entry too.
  const b = await cluster.startReplica(t, 'kas-b', args);
  t.equal((await a.child.stop()).code, 0);
  await b.child.waitForMessage('became the leader', EVENT_MS);
  await b.child.waitForLog((l) => withheldLog.test(l.msg), EVENT_MS);
  t.notOk(entry(cluster, 'require-team')?.matchConditions, 'never written with the conditions');
  t.ok(entry(cluster, 'require-team'), 'and still registered');
  t.ok(entry(cluster, 'require-owner'));
  t.equal((await b.child.stop()).code, 0);
});

t.test('kube-apiserver 1.27, a first install whose policy has matchConditions: the rest is registered, the webhook stays out, the log says why', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.27.16-eks-2f008fe' });
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await policyFile(t, true)]);
  const withheld = replica.child.logs.find((l) => withheldLog.test(l.msg));
  t.match(withheld, { level: 'error', withheld: [{ name: /^require-team\./, instead: 'left-out' }] });
  t.notMatch(String(withheld?.['msg']), /deny-privileged/, 'only the webhook that uses them is named');
  t.match(replica.child.logs.find((l) => l.msg === 'API server version'), { version: 'v1.27.16-eks-2f008fe' });
  t.ok(entry(cluster, 'deny-privileged'), 'the rest is registered');
  t.notOk(entry(cluster, 'require-team'), 'the webhook is not registered wider than the policy says');
  t.equal((await replica.child.stop()).code, 0);
});

t.test('kube-apiserver 1.27 without matchConditions in the policy: registers as usual', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.27.16' });
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await policyFile(t, false)]);
  t.ok(cluster.configuration('validating'), 'registered');
  t.notOk(replica.child.logs.some((l) => /drops matchConditions/.test(l.msg)), 'nothing withheld');
  t.equal((await replica.child.stop()).code, 0);
});

t.test('kube-apiserver 1.28: matchConditions are registered', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.28.0' });
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await policyFile(t, true)]);
  const webhooks = cluster.configuration<{ webhooks: { name: string; matchConditions?: { name: string }[] }[] }>('validating')!.webhooks;
  t.same(webhooks.find((w) => w.name.startsWith('require-team.'))?.matchConditions?.map((c) => c.name), ['not-admin']);
  t.equal((await replica.child.stop()).code, 0);
});

t.test('grouped on kube-apiserver 1.27: a member’s matchConditions are decided by the server, not registered', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.27.16-eks-2f008fe' });
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await policyFile(t, true, [], 'auto')]);
  const webhooks = cluster.configuration<Stored & { webhooks: { service?: unknown }[] }>('validating')!.webhooks;
  t.same(webhooks.map((w) => [w.name, w.matchConditions]), [['validating-fail-t5.kube-admission-server.kas.svc', undefined]], 'one group, no matchConditions for kube-apiserver to drop');
  t.notOk(replica.child.logs.some((l) => /drops matchConditions/.test(l.msg)), 'nothing withheld');
  const caller = cluster.caller(t, () => replica.port);
  const unlabelled = (username: string) =>
    caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE, userInfo: { username, groups: ['system:authenticated'] } });
  t.equal((await unlabelled('alice')).allowed, false, 'require-team applies to alice');
  t.equal((await unlabelled('system:admin')).allowed, true, 'its matchCondition leaves system:admin out, decided by the server');
  t.equal((await replica.child.stop()).code, 0);
});

t.test('grouped on kube-apiserver 1.27: a group whose every member has the same matchConditions registers them, so it is withheld as a whole; the other group is registered', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.27.16-eks-2f008fe' });
  cluster.seedDeployment(['kas-a']);
  // A warning rule is failurePolicy Ignore by default: a group of its own, whose one member's conditions are the group's.
  const warnOwner = ['  - name: warn-owner', '    kind: requireLabels', '    mode: warn', '    params: { labels: [{ key: owner }] }', '    matchConditions:', CONDITION];
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await policyFile(t, false, warnOwner, 'auto')]);
  const names = cluster.configuration<Stored>('validating')!.webhooks.map((w) => w.name);
  t.same(names, ['validating-fail-t5.kube-admission-server.kas.svc'], 'the Fail group is registered, the Ignore group with conditions is not');
  t.match(replica.child.logs.find((l) => /drops matchConditions/.test(l.msg)), { level: 'error', withheld: [{ name: /^validating-ignore-t5\./, instead: 'left-out' }] });
  t.equal((await replica.child.stop()).code, 0);
});
