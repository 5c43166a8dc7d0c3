/**
 * A follower whose policy volume changes before the leader's: it serves the new handlers at once
 * and keeps the previous ones for as long as the registered configurations (the leader's, still
 * on the old version) route to them; once the leader's PUT has landed it retires them, after the
 * entry overlap (3 s here, 15 minutes by default: kube-apiservers whose caches lag). Grouped
 * (the default): the group's path names its members, and an entry stays served while a live
 * path names it.
 */
import { join } from 'node:path';
import t from 'tap';
import { logTimeMs } from './support/server/child-server.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture, type Replica } from './support/kube/cluster-harness.js';
import { DENY_PRIVILEGED_ENTRY, policyText, requireLabelEntry, unservedWarning } from './support/policy/policy-text.js';
import { podReview, request, type ReviewResponse } from './support/server/server-harness.js';
import { eventually } from './support/tls/tls-https.js';

const V1 = policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team', 'team'));
const V2 = policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-owner', 'owner'));
const V1_PATH = '/validate/validating-fail-t5/deny-privileged.require-team';
const V2_PATH = '/validate/validating-fail-t5/deny-privileged.require-owner';

async function reviewAt(cluster: ClusterHarness, replica: Replica, path: string): Promise<ReviewResponse['response']> {
  const webhook = cluster.configuration<{ webhooks: { clientConfig: { caBundle: string } }[] }>('validating')!.webhooks[0]!;
  const ca = Buffer.from(webhook.clientConfig.caBundle, 'base64').toString('utf8');
  const result = await request(replica.port, `${path}?timeout=5s`, podReview({ labels: { app: 'web' } }), { ca, servername: `${NAME}.${NAMESPACE}.svc` });
  if (result.status !== 200) throw new Error(`${path}: HTTP ${result.status} ${result.text}`);
  return (result.json as ReviewResponse).response;
}

t.test("a follower ahead of the leader keeps the old handlers until the leader's PUT has landed", async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a', 'kas-b']);
  const start = async (podName: string): Promise<{ replica: Replica; volume: AtomicWriter }> => {
    const volume = new AtomicWriter(join(cluster.dir, `policy-${podName}`));
    await volume.write({ 'policy.yaml': V1 });
    const replica = await cluster.startReplica(t, podName, ['--policy-file', join(cluster.dir, `policy-${podName}`, 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms', ENTRY_OVERLAP: '3s' });
    return { replica, volume };
  };
  const leader = await start('kas-a');
  await leader.replica.child.waitForMessage('registered as the leader');
  const follower = await start('kas-b');
  await follower.replica.child.waitForMessage('serving as a follower');
  const viaFollower = cluster.caller(t, () => follower.replica.port);

  // kubelet updates the follower's volume first.
  await follower.volume.write({ 'policy.yaml': V2 });
  await follower.replica.child.waitForMessage('policy reloaded', 30_000);
  t.match(follower.replica.child.logs.find((l) => l.msg === 'previous handlers stay served until the webhook configurations no longer route to them'), { retiring: ['/validate/require-team'] });
  t.match((await reviewAt(cluster, follower.replica, V2_PATH)).status?.message, /require-owner: .*missing label "owner"/, 'the new version is served at once');
  const stillRouted = await viaFollower.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(stillRouted.allowed, false, 'require-team, still registered by the leader, is still enforced by the follower');
  if (!stillRouted.allowed) {
    t.equal(stillRouted.status.code, 403, 'a policy denial, not a failed call');
    t.match(stillRouted.status.message, /require-team.*missing label "team"/);
  }
  t.notOk(follower.replica.child.logs.some((l) => l.msg === 'previous handlers retired'), 'not retired while routed');
  t.same(cluster.registeredValidatingPaths(), [V1_PATH]);

  // Then the leader's volume changes too: it registers v2, and the follower retires require-team.
  await leader.volume.write({ 'policy.yaml': V2 });
  await leader.replica.child.waitForMessage('policy reloaded', 30_000);
  const put = await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations' && r.status === 200, { timeoutMs: 45_000 });
  const retired = await follower.replica.child.waitForMessage('previous handlers retired', 45_000);
  t.same(retired['retired'], ['/validate/require-team']);
  // The log's time and the request log's clock are the same machine's: retirement came after the PUT.
  const putLandedAt = performance.timeOrigin + put.endedAt!;
  t.ok(logTimeMs(retired) >= Math.floor(putLandedAt) - 5, `retired ${Math.round(logTimeMs(retired) - putLandedAt)} ms after the leader's PUT landed`);
  t.same(cluster.registeredValidatingPaths(), [V2_PATH]);
  // The leader recorded require-team as removed: a kube-apiserver still on the old path gets it as not served.
  await eventually(async () => (await reviewAt(cluster, follower.replica, V1_PATH)).warnings?.[0] === unservedWarning('require-team'), 'the old path answered as unserved', 15_000);
  t.equal((await follower.replica.child.stop()).code, 0);
  t.equal((await leader.replica.child.stop()).code, 0);
});
