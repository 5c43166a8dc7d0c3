/**
 * Replicas on different policy versions (a ConfigMap edit reaches each pod at its own moment, a
 * rolling update mixes versions) behind one Service. A call for an entry only the newer replica
 * runs must never be allowed by the one behind: it answers 503 (Retry-After: 0, Connection: close)
 * and kube-apiserver retries at once on a new connection, which the Service sends to the other
 * replica; with no replica able to answer, the call fails and failurePolicy Fail denies. Grouped
 * (the call's path names the members) and one webhook per entry alike. And a replica started
 * after an entry was removed, called by a kube-apiserver whose cache still has the old
 * configuration, answers for the removed entry as not served: the leader recorded the removal.
 */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import t from 'tap';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness, NAME, POD_KIND, POD_RESOURCE, podFixture, type Replica } from './support/kube/cluster-harness.js';
import { DENY_PRIVILEGED_ENTRY, requireLabelEntry, unservedWarning } from './support/policy/policy-text.js';

const policyText = (grouping: 'auto' | 'none', webhooks: string): string => `apiVersion: kube-admission-server/v1\nkind: Policy\ngrouping: ${grouping}\nwebhooks:\n${webhooks}`;

async function metric(replica: Replica, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${replica.healthPort}/metrics`, { signal: AbortSignal.timeout(EVENT_MS) })).text();
  const match = pattern.exec(text);
  return match ? Number(match[1]) : 0;
}

for (const grouping of ['auto', 'none'] as const) {
  t.test(`grouping ${grouping}: the replica behind never allows what the newer policy's enforcing entry denies`, async (t) => {
    const cluster = await ClusterHarness.start(t);
    cluster.seedDeployment(['kas-new', 'kas-old']);
    const newPolicy = join(cluster.dir, 'policy-new.yaml');
    const oldPolicy = join(cluster.dir, 'policy-old.yaml');
    await writeFile(oldPolicy, policyText(grouping, DENY_PRIVILEGED_ENTRY));
    await writeFile(newPolicy, policyText(grouping, DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team', 'team')));
    // The leader has the new version and registers require-team; the other replica's volume is behind.
    const leader = await cluster.startReplica(t, 'kas-new', ['--policy-file', newPolicy]);
    await leader.child.waitForMessage('registered as the leader');
    const behind = await cluster.startReplica(t, 'kas-old', ['--policy-file', oldPolicy]);
    await behind.child.waitForMessage('serving as a follower');
    const webhook = grouping === 'auto' ? 'validating-fail-t5' : 'require-team';
    t.same(cluster.registeredValidatingPaths(), grouping === 'auto' ? ['/validate/validating-fail-t5/deny-privileged.require-team'] : ['/validate/deny-privileged', '/validate/require-team']);

    const { caller, service } = cluster.serviceCaller(t, () => [behind.port, leader.port]);
    const retriesBefore = await metric(behind, new RegExp(`kube_admission_requests_total\\{webhook="${webhook}",operation="CREATE",decision="retry"\\} (\\d+)`));
    for (let i = 0; i < 12; i++) {
      const labelled = i % 2 === 0;
      const object = podFixture(labelled ? { app: 'web', team: 'a' } : { app: 'web' });
      const result = await caller.admit({ operation: 'CREATE', object, kind: POD_KIND, resource: POD_RESOURCE });
      const what = `admission ${i} (${labelled ? 'labelled' : 'no team label'})`;
      t.same(result.auditAnnotations, {}, `${what}: nothing failed open`);
      t.same(result.warnings, [], `${what}: no "not served"`);
      if (labelled) t.equal(result.allowed, true, `${what}: allowed`);
      else {
        t.equal(result.allowed, false, `${what}: denied by require-team`);
        if (!result.allowed) {
          t.equal(result.status.code, 403, `${what}: a policy denial, not a failed call`);
          t.match(result.status.message, /require-team.*denied the request: .*missing label "team"|denied the request: require-team: .*missing label "team"/);
        }
      }
    }
    const asked = (await metric(behind, new RegExp(`kube_admission_requests_total\\{webhook="${webhook}",operation="CREATE",decision="retry"\\} (\\d+)`))) - retriesBefore;
    t.ok(asked > 0, `the replica behind asked for a retry ${asked} times`);
    t.ok(service.connections.includes(behind.port) && service.connections.includes(leader.port), 'the Service sent connections to both');
    await behind.child.waitForLog((l) => l.msg === 'review names entries this replica does not run and may be newer: answered 503 so kube-apiserver retries' && l.level === 'warn');
    // Never answered as not served (no warning above), but counted as a disagreement: KubeAdmissionReplicasDisagree sees it.
    t.ok((await metric(behind, /kube_admission_unknown_webhook_total\{type="validating",webhook="require-team"\} (\d+)/)) >= asked, 'each retry counted as an entry it does not run');

    // Only the replica behind to call: nothing answers require-team, so the call fails and Fail denies.
    const alone = cluster.caller(t, () => behind.port);
    const lone = await alone.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
    t.equal(lone.allowed, false, 'not allowed');
    if (!lone.allowed) {
      t.equal(lone.status.code, 500, 'a failed call under failurePolicy Fail');
      t.match(lone.status.message, /failed calling webhook .*does not run "require-team"/, 'the user reads why');
    }
    t.equal((await behind.child.stop()).code, 0);
    t.equal((await leader.child.stop()).code, 0);
  });
}

t.test('a replica started after an entry was removed answers a lagging kube-apiserver for it as not served (the leader recorded the removal)', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a', 'kas-b']);
  const volume = new AtomicWriter(join(cluster.dir, 'policy-a'));
  await volume.write({ 'policy.yaml': policyText('auto', DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team', 'team')) });
  const leader = await cluster.startReplica(t, 'kas-a', ['--policy-file', join(cluster.dir, 'policy-a', 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms' });
  await leader.child.waitForMessage('registered as the leader');
  const target = { port: 0 };
  // A kube-apiserver whose cache stopped here: it keeps calling the path that names require-team.
  const stale = cluster.laggingCaller(t, () => target.port, Number.POSITIVE_INFINITY);

  const editedAt = performance.now();
  await volume.write({ 'policy.yaml': policyText('auto', DENY_PRIVILEGED_ENTRY) });
  await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > editedAt && r.status === 200, { timeoutMs: EVENT_MS });
  const annotations = cluster.api.store.get('validatingwebhookconfigurations', undefined, NAME)?.metadata?.annotations ?? {};
  t.match(JSON.parse(annotations['kube-admission-server/removed-entries'] ?? '{}'), { 'validating/require-team': String }, 'the leader recorded the removal');

  const freshPolicy = join(cluster.dir, 'policy-b.yaml');
  await writeFile(freshPolicy, policyText('auto', DENY_PRIVILEGED_ENTRY));
  const fresh = await cluster.startReplica(t, 'kas-b', ['--policy-file', freshPolicy]);
  await fresh.child.waitForMessage('serving as a follower');
  target.port = fresh.port;
  const unlabelled = await stale.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(unlabelled.allowed, true, 'require-team is in no current policy: allowed');
  t.same(unlabelled.warnings, [unservedWarning('require-team')], 'with the warning');
  const privileged = await stale.admit({ operation: 'CREATE', object: podFixture({ app: 'web', team: 'a' }, { securityContext: { privileged: true } }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(privileged.allowed, false, 'the member it runs still answers on that path');
  t.equal((await fresh.child.stop()).code, 0);
  t.equal((await leader.child.stop()).code, 0);
});
