/**
 * Replicas whose policy volumes are on different versions (kubelet updates each pod's volume at
 * its own moment): a leader whose file is older than the policy the live configuration carries
 * never rolls it back (and never answers "allowed, not served" for the newer policy's enforcing
 * rule), and a replica that retired a handler serves it again as soon as a live configuration
 * routes to it again, instead of answering "not served" for an enforcing rule.
 */
import { join } from 'node:path';
import t from 'tap';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import type { KubeObject } from '../local-cluster/fake-apiserver/objects.js';
import { ClusterHarness, NAME, POD_KIND, POD_RESOURCE, podFixture, type Cleanups, type Replica } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { DENY_PRIVILEGED_ENTRY, policyText, requireLabelEntry } from './support/policy/policy-text.js';

const V1 = policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team', 'team'));
const V2 = policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-owner', 'owner'));
const V3 = policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-cost-centre', 'cost-centre'));
/** Each version's one validating group (grouping auto): its name stays, its path names the members. */
const groupPath = (rule: string): string => `/validate/validating-fail-t5/deny-privileged.${rule}`;

interface Pod {
  replica: Replica;
  volume: AtomicWriter;
}

async function startPod(t: Cleanups, cluster: ClusterHarness, name: string, policy: string): Promise<Pod> {
  const volume = new AtomicWriter(join(cluster.dir, `policy-${name}`));
  await volume.write({ 'policy.yaml': policy });
  const replica = await cluster.startReplica(t, name, ['--policy-file', join(cluster.dir, `policy-${name}`, 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms', ENTRY_OVERLAP: '3s' });
  return { replica, volume };
}

const unlabelled = { operation: 'CREATE' as const, object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE };

t.test('a leader whose policy volume is behind keeps the newer policy registered, and registers a newer one when its file has it', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a', 'kas-b']);
  const a = await startPod(t, cluster, 'kas-a', V1);
  await a.replica.child.waitForMessage('registered as the leader');
  const b = await startPod(t, cluster, 'kas-b', V1);
  await b.replica.child.waitForMessage('serving as a follower');

  // kubelet updates the leader's volume first: it registers V2.
  await a.volume.write({ 'policy.yaml': V2 });
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, () => cluster.registeredValidatingPaths().includes(groupPath('require-owner')), { timeoutMs: EVENT_MS });

  // The leader goes away (a rolling update); kas-b, whose volume still holds V1, takes over.
  t.equal((await a.replica.child.stop()).code, 0);
  await b.replica.child.waitForMessage('became the leader', EVENT_MS);
  const waiting = await b.replica.child.waitForMessage("the live webhook configuration carries a newer policy than this replica's file; keeping it until this replica's policy volume catches up", EVENT_MS);
  t.match(waiting, { level: 'warn' });
  // Several reconcile passes later (RESYNC_PERIOD 2s), still V2.
  const passesFrom = performance.now();
  await cluster.api.waitForRequest((r) => r.verb === 'get' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > passesFrom + 4000, { timeoutMs: EVENT_MS });
  t.same(cluster.registeredValidatingPaths(), [groupPath('require-owner')], 'not rolled back to require-team');
  const caller = cluster.caller(t, () => b.replica.port);
  const answer = await caller.admit(unlabelled);
  // The new leader does not know V2's require-owner yet and knows it is behind: it never allows
  // for it, it asks kube-apiserver to retry; with no other replica up, the call fails and
  // failurePolicy Fail rejects the request, saying why.
  t.equal(answer.allowed, false, 'require-owner is not let through by the replica that does not run it');
  if (!answer.allowed) t.match(answer.status, { code: 500, message: /failed calling webhook "validating-fail-t5\..*does not run "require-owner"/ });
  t.same(answer.warnings.filter((w) => w.startsWith('this replica does not serve')), [], 'not answered "not served"');

  // Its volume catches up, then moves on to V3: that it registers.
  await b.volume.write({ 'policy.yaml': V2 });
  await b.replica.child.waitForMessage('policy reloaded', EVENT_MS);
  await b.volume.write({ 'policy.yaml': V3 });
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, () => cluster.registeredValidatingPaths().includes(groupPath('require-cost-centre')), { timeoutMs: EVENT_MS });
  t.same(cluster.registeredValidatingPaths(), [groupPath('require-cost-centre')]);
  t.equal((await b.replica.child.stop()).code, 0);
});

t.test('a retired handler is served again when a live configuration routes to it again', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a', 'kas-b']);
  const a = await startPod(t, cluster, 'kas-a', V1);
  await a.replica.child.waitForMessage('registered as the leader');
  const b = await startPod(t, cluster, 'kas-b', V1);
  await Promise.all([a.volume.write({ 'policy.yaml': V2 }), b.volume.write({ 'policy.yaml': V2 })]);
  await b.replica.child.waitForLog((l) => l.msg === 'previous handlers retired' && JSON.stringify(l['retired']) === '["/validate/require-team"]', EVENT_MS);
  const viaFollower = cluster.caller(t, () => b.replica.port);

  // Someone applies an old copy of the configuration (a backup, a GitOps tool), marked unmanaged so
  // that the leader leaves it alone: require-team is routed again.
  const live = cluster.configuration<{ metadata: { annotations?: Record<string, string> }; webhooks: { name: string; clientConfig: { service: { path: string } } }[] }>('validating')!;
  const oldCopy = structuredClone(live);
  oldCopy.metadata.annotations = { ...oldCopy.metadata.annotations, 'kube-admission-server.io/unmanaged': 'true' };
  const group = oldCopy.webhooks.find((w) => w.clientConfig.service.path === groupPath('require-owner'))!;
  group.clientConfig.service.path = groupPath('require-team');
  const routedAgainAt = performance.now();
  cluster.api.store.update('validatingwebhookconfigurations', oldCopy as unknown as KubeObject);
  await b.replica.child.waitForMessage('previous handlers served again: a live webhook configuration routes to them', EVENT_MS);
  const answer = await viaFollower.admit(unlabelled);
  t.equal(answer.allowed, false, 'require-team is enforced again on the replica that had retired it');
  if (!answer.allowed) t.match(answer.status.message, /require-team.*missing label "team"/);
  t.same(answer.warnings.filter((w) => w.startsWith('this replica does not serve')), [], 'not answered "not served"');
  const calls = viaFollower.calls.filter((c) => c.startedAt > routedAgainAt);
  t.same(calls.filter((c) => c.outcome === 'error'), []);
  t.equal((await b.replica.child.stop()).code, 0);
  t.equal((await a.replica.child.stop()).code, 0);
});
