/**
 * Replicas on different policy versions (a ConfigMap edit reaches each pod at its own moment, a
 * rolling update mixes versions) behind one Service: a webhook only some replicas serve must
 * never fail a call kube-apiserver makes.
 */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import t from 'tap';
import { ServiceModel } from './support/chaos/service.js';
import { ClusterHarness, POD_KIND, POD_RESOURCE, podFixture, type Replica } from './support/kube/cluster-harness.js';
import { DENY_PRIVILEGED_ENTRY, policyText, requireLabelEntry, unservedWarning } from './support/policy/policy-text.js';

async function unknownWebhookCount(replica: Replica, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${replica.healthPort}/metrics`)).text();
  const match = new RegExp(`kube_admission_unknown_webhook_total\\{type="validating",webhook="${name}"\\} (\\d+)`).exec(text);
  return match ? Number(match[1]) : 0;
}

t.test('two replicas on different policy versions behind the Service: a webhook only one serves never fails a call', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-new', 'kas-old']);
  const newPolicy = join(cluster.dir, 'policy-new.yaml');
  const oldPolicy = join(cluster.dir, 'policy-old.yaml');
  await writeFile(newPolicy, policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team', 'team')));
  await writeFile(oldPolicy, policyText(DENY_PRIVILEGED_ENTRY));
  // The leader has the new version and registers require-team; the other replica's volume is behind.
  const leader = await cluster.startReplica(t, 'kas-new', ['--policy-file', newPolicy]);
  await leader.child.waitForMessage('registered as the leader');
  const behind = await cluster.startReplica(t, 'kas-old', ['--policy-file', oldPolicy]);
  await behind.child.waitForMessage('serving as a follower');
  t.same(cluster.registeredValidatingPaths(), ['/validate/deny-privileged', '/validate/require-team']);

  const service = new ServiceModel(cluster.api);
  t.teardown(() => service.close());
  service.add(leader.podName, leader.port);
  service.add(behind.podName, behind.port);
  const viaBehind = { labelled: 0, unlabelled: 0 };
  for (let i = 0; i < 24; i++) {
    const labelled = i % 4 < 2;
    const object = podFixture(labelled ? { app: 'web', team: 'a' } : { app: 'web' });
    const { result, endpoint, retries } = await service.admit({ operation: 'CREATE', object, kind: POD_KIND, resource: POD_RESOURCE });
    const what = `admission ${i} (${labelled ? 'labelled' : 'no team label'}) via ${endpoint}`;
    t.equal(retries, 0, `${what}: no transport failure`);
    t.same(result.auditAnnotations, {}, `${what}: nothing failed open`);
    if (endpoint === behind.podName) {
      viaBehind[labelled ? 'labelled' : 'unlabelled']++;
      t.equal(result.allowed, true, `${what}: allowed by the replica that does not serve require-team`);
      t.same(result.warnings, [unservedWarning('require-team')], `${what}: with the warning`);
    } else if (labelled) {
      t.same({ allowed: result.allowed, warnings: result.warnings }, { allowed: true, warnings: [] }, `${what}: allowed`);
    } else {
      t.equal(result.allowed, false, `${what}: denied by require-team`);
      if (!result.allowed) {
        t.equal(result.status.code, 403, `${what}: a policy denial, not a failed call`);
        t.match(result.status.message, /admission webhook "require-team\.kube-admission-server\.kas\.svc" denied the request: .*missing label "team"/);
      }
    }
  }
  t.ok(viaBehind.labelled > 0 && viaBehind.unlabelled > 0, `the replica behind got both kinds of calls (${JSON.stringify(viaBehind)})`);
  t.equal(await unknownWebhookCount(behind, 'require-team'), viaBehind.labelled + viaBehind.unlabelled, 'each one counted');
  t.equal(await unknownWebhookCount(leader, 'require-team'), 0);
  t.ok(behind.child.logs.some((l) => l.msg === 'review for a webhook this replica does not serve (yet or any more): allowed with a warning' && l.level === 'warn' && l['webhook'] === 'require-team'), 'and logged at warn');
  t.equal((await behind.child.stop()).code, 0);
  t.equal((await leader.child.stop()).code, 0);
});
