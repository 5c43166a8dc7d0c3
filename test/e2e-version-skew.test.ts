/**
 * Replicas on different policy versions (a ConfigMap edit reaches each pod at its own moment, a
 * rolling update mixes versions): no call kube-apiserver makes may fail, and the leader orders
 * its own change as new handlers, then the PUT, then old handlers out.
 */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import t from 'tap';
import { AtomicWriter } from './support/atomic-writer.js';
import { ServiceModel } from './support/chaos/service.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture, type Replica } from './support/cluster-harness.js';
import { podReview, request, type ReviewResponse } from './support/server-harness.js';
import { eventually } from './support/tls-https.js';

const policy = (webhooks: string): string => `apiVersion: kube-admission-server/v1\nkind: Policy\nwebhooks:\n${webhooks}`;
const DENY_PRIVILEGED = '  - name: deny-privileged\n    kind: denyPrivileged\n';
const requireLabel = (name: string, key: string): string => `  - name: ${name}\n    kind: requireLabels\n    params:\n      labels:\n        - key: ${key}\n`;
const UNSERVED_TEAM = 'this replica does not serve "require-team" (yet or any more); allowed';
const SERVICE_HOST = `${NAME}.${NAMESPACE}.svc`;

interface StoredWebhook {
  name: string;
  clientConfig: { caBundle: string; service: { path: string } };
}

function registeredPaths(cluster: ClusterHarness): string[] {
  return (cluster.configuration<{ webhooks?: StoredWebhook[] }>('validating')?.webhooks ?? []).map((w) => w.clientConfig.service.path).sort();
}

function caBundle(cluster: ClusterHarness): string {
  const webhook = cluster.configuration<{ webhooks: StoredWebhook[] }>('validating')!.webhooks[0]!;
  return Buffer.from(webhook.clientConfig.caBundle, 'base64').toString('utf8');
}

/** A review sent straight to one replica's path (not through the configurations), verified like kube-apiserver does. */
async function reviewAt(cluster: ClusterHarness, replica: Replica, path: string, labels: Record<string, string>): Promise<ReviewResponse['response']> {
  const result = await request(replica.port, `${path}?timeout=5s`, podReview({ labels }), { ca: caBundle(cluster), servername: SERVICE_HOST });
  if (result.status !== 200) throw new Error(`${path}: HTTP ${result.status} ${result.text}`);
  return (result.json as ReviewResponse).response;
}

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
  await writeFile(newPolicy, policy(DENY_PRIVILEGED + requireLabel('require-team', 'team')));
  await writeFile(oldPolicy, policy(DENY_PRIVILEGED));
  // The leader has the new version and registers require-team; the other replica's volume is behind.
  const leader = await cluster.startReplica(t, 'kas-new', ['--policy-file', newPolicy]);
  await leader.child.waitForMessage('registered as the leader');
  const behind = await cluster.startReplica(t, 'kas-old', ['--policy-file', oldPolicy]);
  await behind.child.waitForMessage('serving as a follower');
  t.same(registeredPaths(cluster), ['/validate/deny-privileged', '/validate/require-team']);

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
      t.same(result.warnings, [UNSERVED_TEAM], `${what}: with the warning`);
    } else if (labelled) {
      t.same(result, { allowed: true, object: result.allowed ? result.object : undefined, warnings: [], auditAnnotations: {} }, `${what}: allowed`);
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
  t.ok(behind.child.logs.some((l) => l.msg === 'review for a webhook this replica does not serve (yet or any more): allowed with a warning' && l.level === 40 && l['webhook'] === 'require-team'), 'and logged at warn');
  t.equal((await behind.child.stop()).code, 0);
  t.equal((await leader.child.stop()).code, 0);
});

t.test('the leader serves the new handlers before its PUT and keeps the old ones until the PUT has landed', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const volume = new AtomicWriter(join(cluster.dir, 'policy-volume'));
  await volume.write({ 'policy.yaml': policy(DENY_PRIVILEGED + requireLabel('require-team', 'team')) });
  const leader = await cluster.startReplica(t, 'kas-a', ['--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms' });
  await leader.child.waitForMessage('registered as the leader');
  const caller = cluster.caller(t, () => leader.port);
  const admitUnlabelled = () => caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });

  // The PUT of the validating configuration hangs (an API server that is slow to write).
  cluster.api.faults.add({ resource: 'validatingwebhookconfigurations', verb: 'update' }, { hang: true });
  await volume.write({ 'policy.yaml': policy(DENY_PRIVILEGED + requireLabel('require-owner', 'owner')) });
  await leader.child.waitForMessage('policy reloaded', 15_000);
  await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations', { phase: 'started', timeoutMs: 15_000 });

  t.same(registeredPaths(cluster), ['/validate/deny-privileged', '/validate/require-team'], 'the PUT has not landed');
  const owner = await reviewAt(cluster, leader, '/validate/require-owner', { app: 'web' });
  t.equal(owner.allowed, false, 'the new webhook is already served');
  t.match(owner.status?.message, /missing label "owner"/);
  const team = await reviewAt(cluster, leader, '/validate/require-team', { app: 'web' });
  t.equal(team.allowed, false, 'the old webhook is still served');
  t.match(team.status?.message, /missing label "team"/);
  const asRegistered = await admitUnlabelled();
  t.equal(asRegistered.allowed, false, 'kube-apiserver, still calling the old configuration, gets the old rule enforced');
  if (!asRegistered.allowed) t.match(asRegistered.status.message, /require-team.*missing label "team"/);
  t.ok(leader.child.logs.some((l) => l.msg === 'previous handlers stay served until the webhook configurations no longer route to them'));
  t.notOk(leader.child.logs.some((l) => l.msg === 'previous handlers retired'), 'nothing retired while the PUT hangs');

  // The API recovers: the PUT lands, and only then is the old handler retired.
  cluster.api.faults.clear();
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, (object) =>
    ((object as { webhooks?: StoredWebhook[] }).webhooks ?? []).some((w) => w.clientConfig.service.path === '/validate/require-owner'), { timeoutMs: 20_000 });
  t.same(registeredPaths(cluster), ['/validate/deny-privileged', '/validate/require-owner']);
  const retired = await leader.child.waitForMessage('previous handlers retired', 20_000);
  t.same(retired['retired'], ['/validate/require-team']);
  await eventually(async () => (await reviewAt(cluster, leader, '/validate/require-team', { app: 'web' })).warnings?.[0] === UNSERVED_TEAM, 'the old path answered as unserved', 10_000);
  const afterPut = await admitUnlabelled();
  t.equal(afterPut.allowed, false, 'the new rule is what kube-apiserver now calls');
  if (!afterPut.allowed) t.match(afterPut.status.message, /require-owner.*missing label "owner"/);
  t.equal((await leader.child.stop()).code, 0);
});
