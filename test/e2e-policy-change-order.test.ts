/**
 * The leader orders its own policy change: the new handlers are served first, then the
 * configurations are PUT, and the old handlers go only once the PUT has landed (and the entry
 * overlap has passed, 3 s here), so that no
 * replica, this one included, answers a webhook kube-apiserver still calls as unknown.
 */
import { join } from 'node:path';
import t from 'tap';
import { logTimeMs } from './support/server/child-server.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture, type Replica } from './support/kube/cluster-harness.js';
import { DENY_PRIVILEGED_ENTRY, policyText, requireLabelEntry, unservedWarning } from './support/policy/policy-text.js';
import { podReview, request, type ReviewResponse } from './support/server/server-harness.js';
import { eventually } from './support/tls/tls-https.js';

const SERVICE_HOST = `${NAME}.${NAMESPACE}.svc`;
/** The group's path before and after the change: its name stays, the members in the path change. */
const V1_PATH = '/validate/validating-fail-t5/deny-privileged.require-team';
const V2_PATH = '/validate/validating-fail-t5/deny-privileged.require-owner';

/** The CA bundle of the stored validating configuration: what kube-apiserver trusts. */
function registeredCaBundle(cluster: ClusterHarness): string {
  const webhook = cluster.configuration<{ webhooks: { clientConfig: { caBundle: string } }[] }>('validating')!.webhooks[0]!;
  return Buffer.from(webhook.clientConfig.caBundle, 'base64').toString('utf8');
}

/** A review sent straight to the replica's path (not through the configurations), verified as kube-apiserver does. */
async function reviewAt(cluster: ClusterHarness, replica: Replica, path: string): Promise<ReviewResponse['response']> {
  const result = await request(replica.port, `${path}?timeout=5s`, podReview({ labels: { app: 'web' } }), { ca: registeredCaBundle(cluster), servername: SERVICE_HOST });
  if (result.status !== 200) throw new Error(`${path}: HTTP ${result.status} ${result.text}`);
  return (result.json as ReviewResponse).response;
}

t.test('the leader serves the new handlers before its PUT and keeps the old ones until the PUT has landed', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const volume = new AtomicWriter(join(cluster.dir, 'policy-volume'));
  await volume.write({ 'policy.yaml': policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team', 'team')) });
  const leader = await cluster.startReplica(t, 'kas-a', ['--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms', ENTRY_OVERLAP: '3s' });
  await leader.child.waitForMessage('registered as the leader');
  const caller = cluster.caller(t, () => leader.port);
  const admitUnlabelled = () => caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });

  // The PUT of the validating configuration hangs (an API server that is slow to write).
  cluster.api.faults.add({ resource: 'validatingwebhookconfigurations', verb: 'update' }, { hang: true });
  await volume.write({ 'policy.yaml': policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-owner', 'owner')) });
  await leader.child.waitForMessage('policy reloaded', 30_000);
  await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations', { phase: 'started', timeoutMs: 30_000 });

  t.same(cluster.registeredValidatingPaths(), [V1_PATH], 'the PUT has not landed');
  const owner = await reviewAt(cluster, leader, V2_PATH);
  t.equal(owner.allowed, false, 'the new version is already served');
  t.match(owner.status?.message, /require-owner: .*missing label "owner"/);
  const team = await reviewAt(cluster, leader, V1_PATH);
  t.equal(team.allowed, false, 'the old version is still served');
  t.match(team.status?.message, /require-team: .*missing label "team"/);
  const asRegistered = await admitUnlabelled();
  t.equal(asRegistered.allowed, false, 'kube-apiserver, still calling the old configuration, gets the old rule enforced');
  if (!asRegistered.allowed) t.match(asRegistered.status.message, /require-team.*missing label "team"/);
  t.ok(leader.child.logs.some((l) => l.msg === 'previous handlers stay served until the webhook configurations no longer route to them'));
  t.notOk(leader.child.logs.some((l) => l.msg === 'previous handlers retired'), 'nothing retired while the PUT hangs');

  // The API recovers: the PUT lands, and only then is the old handler retired.
  cluster.api.faults.clear();
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, (object) =>
    ((object as { webhooks?: { clientConfig: { service: { path: string } } }[] }).webhooks ?? []).some((w) => w.clientConfig.service.path === V2_PATH), { timeoutMs: 30_000 });
  t.same(cluster.registeredValidatingPaths(), [V2_PATH]);
  const put = await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations' && r.status === 200, { timeoutMs: 30_000 });
  const retired = await leader.child.waitForMessage('previous handlers retired', 30_000);
  t.same(retired['retired'], ['/validate/require-team']);
  // The log's time and the request log's clock are the same machine's: retirement came after the PUT.
  const putLandedAt = performance.timeOrigin + put.endedAt!;
  t.ok(logTimeMs(retired) >= Math.floor(putLandedAt) - 5, `retired ${Math.round(logTimeMs(retired) - putLandedAt)} ms after the PUT landed`);
  // Recorded as removed by this registration: a kube-apiserver still on the old path gets it as not served.
  await eventually(async () => (await reviewAt(cluster, leader, V1_PATH)).warnings?.[0] === unservedWarning('require-team'), 'the old path answered as unserved', 15_000);
  const afterPut = await admitUnlabelled();
  t.equal(afterPut.allowed, false, 'the new rule is what kube-apiserver now calls');
  if (!afterPut.allowed) t.match(afterPut.status.message, /require-owner.*missing label "owner"/);
  t.equal((await leader.child.stop()).code, 0);
});
