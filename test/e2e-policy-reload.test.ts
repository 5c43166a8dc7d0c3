import t from 'tap';
import { join } from 'node:path';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness, NAME, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';

const policy = (webhooks: string): string => `apiVersion: kube-admission-server/v1\nkind: Policy\nwebhooks:\n${webhooks}`;
const DENY_PRIVILEGED = '  - name: deny-privileged\n    kind: denyPrivileged\n';
const REQUIRE_TEAM = '  - name: require-team\n    kind: requireLabels\n    params:\n      labels:\n        - key: team\n';

t.test('a ConfigMap-mounted policy is reloaded without a restart; an invalid version keeps the old one', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const policyDir = join(cluster.dir, 'policy-volume');
  const volume = new AtomicWriter(policyDir);
  await volume.write({ 'policy.yaml': policy(DENY_PRIVILEGED) });
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', join(policyDir, 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms' });
  const caller = cluster.caller(t, () => replica.port);
  const unlabelled = { operation: 'CREATE' as const, object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE };
  t.equal((await caller.admit(unlabelled)).allowed, true, 'no team label needed yet');

  await volume.write({ 'policy.yaml': policy(DENY_PRIVILEGED + REQUIRE_TEAM) });
  await replica.child.waitForMessage('policy reloaded', EVENT_MS);
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, (object) =>
    ((object as { webhooks?: { clientConfig: { service: { path: string } } }[] }).webhooks ?? []).some((w) => w.clientConfig.service.path.split('/').slice(3).join('.').split('.').includes('require-team')),
    { timeoutMs: EVENT_MS });
  const denied = await caller.admit(unlabelled);
  t.equal(denied.allowed, false, 'the new rule is registered by the leader and enforced by the handlers');
  if (!denied.allowed) t.match(denied.status.message, /require-team.*team/);

  await volume.write({ 'policy.yaml': policy('  - name: Not_A_Name\n    kind: requireLabels\n') });
  const rejected = await replica.child.waitForMessage('new policy version rejected; keeping the previous one', EVENT_MS);
  t.match(JSON.stringify(rejected['problems']), /policy\.yaml:4:/, 'names the line');
  t.equal((await caller.admit(unlabelled)).allowed, false, 'the previous version still applies');
  const metrics = await (await fetch(`http://127.0.0.1:${replica.healthPort}/metrics`, { signal: AbortSignal.timeout(EVENT_MS) })).text();
  t.match(metrics, /kube_admission_policy_reload_errors_total 1/);
  t.match(metrics, /kube_admission_policy_reloads_total 1/);
  t.equal((await replica.child.stop()).code, 0);
});
