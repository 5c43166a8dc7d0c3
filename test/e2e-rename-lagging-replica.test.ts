/**
 * A rule renamed while the only ready replica's policy volume lags (an exploration found it breaking I1). The
 * leader is a new pod, not a ready endpoint yet, whose volume has the new name at once; kube-apiserver
 * routes the Service to the one ready replica, which does not run the new entry: it answers 503
 * "retry on another replica", and kube-apiserver's retries reach the same replica (the only ready
 * endpoint), so under failurePolicy Fail the user's writes are refused until its volume catches up.
 * Wanted: the leader registers the new entry only once every ready replica serves it (bounded), so
 * no write is refused because of a rename. And the wait follows the leader's own policy when it
 * reloads meanwhile (an exploration saw a new leader wait the whole bound for a name it no longer had).
 */
import { join } from 'node:path';
import t from 'tap';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { DENY_PRIVILEGED_ENTRY, policyText, requireLabelEntry } from './support/policy/policy-text.js';

/** How long after the leader's volume the ready replica's volume gets the rename (kubelet syncs each pod apart). */
const VOLUME_LAG_MS = 6000;

const OLD = policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team', 'team'));
const RENAMED = policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team-r1', 'team'));

/** The Service's EndpointSlice as the endpoints controller writes it: only `port` on 127.0.0.1 is a ready endpoint. */
function onlyReadyEndpoint(cluster: ClusterHarness, port: number): void {
  for (const slice of cluster.api.store.list('endpointslices', NAMESPACE)) cluster.api.store.delete('endpointslices', NAMESPACE, slice.metadata?.name ?? '');
  cluster.api.store.put('endpointslices', {
    metadata: { name: `${NAME}-abcde`, namespace: NAMESPACE, labels: { 'kubernetes.io/service-name': NAME } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true, serving: true, terminating: false } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  } as KubeObject);
}

t.test('a rename reaches the live configuration only once the ready replica serves the new entry: no write refused', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-leader', 'kas-ready']);
  const volumes = { leader: new AtomicWriter(join(cluster.dir, 'volume-leader')), ready: new AtomicWriter(join(cluster.dir, 'volume-ready')) };
  await volumes.leader.write({ 'policy.yaml': OLD });
  await volumes.ready.write({ 'policy.yaml': OLD });
  const env = { WATCH_POLL_INTERVAL: '300ms' };
  const leader = await cluster.startReplica(t, 'kas-leader', ['--policy-file', join(cluster.dir, 'volume-leader', 'policy.yaml')], env);
  const ready = await cluster.startReplica(t, 'kas-ready', ['--policy-file', join(cluster.dir, 'volume-ready', 'policy.yaml')], env);
  onlyReadyEndpoint(cluster, ready.port);
  const caller = cluster.caller(t, () => ready.port);
  const unlabelled = () => caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  const first = await unlabelled();
  t.match(first.allowed ? 'allowed' : first.status.message, /require-team.*missing label "team"/, 'require-team enforced before the rename');

  const renamedAt = performance.now();
  await volumes.leader.write({ 'policy.yaml': RENAMED });
  const answers: string[] = [];
  let readyVolumeAt: number | undefined;
  const renamedPath = () => cluster.registeredValidatingPaths().some((path) => path.includes('require-team-r1'));
  const deadline = performance.now() + VOLUME_LAG_MS + EVENT_MS;
  // Writes keep coming through the rename; the ready replica's volume follows VOLUME_LAG_MS later.
  while (!(renamedPath() && readyVolumeAt !== undefined && answers.at(-1)?.includes('require-team-r1'))) {
    if (performance.now() > deadline) break;
    if (readyVolumeAt === undefined && performance.now() - renamedAt >= VOLUME_LAG_MS) {
      await volumes.ready.write({ 'policy.yaml': RENAMED });
      readyVolumeAt = performance.now();
    }
    const result = await unlabelled();
    answers.push(result.allowed ? 'allowed' : (result.status.message ?? ''));
  }
  const refused = answers.filter((message) => /failed calling webhook/.test(message));
  t.same(refused, [], `no write refused by a failed call during the rename (${answers.length} writes)`);
  t.same(answers.filter((message) => message === 'allowed'), [], 'every unlabelled Pod denied: the rule never failed open');
  t.match(answers.at(-1), /require-team-r1.*missing label "team"/, 'then the renamed rule enforces');

  const put = cluster.api.requests.find((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > renamedAt && r.status === 200);
  t.ok(put && readyVolumeAt !== undefined && put.startedAt > readyVolumeAt, 'the renamed entry was registered after the ready replica got it');
  const waited = await leader.child.waitForMessage('every ready replica serves the new entries; registering them', EVENT_MS);
  t.ok(Number(waited['waitedMs']) > 0, `the leader waited ${String(waited['waitedMs'])} ms for the ready replica`);
  t.equal((await ready.child.stop()).code, 0);
  t.equal((await leader.child.stop()).code, 0);
});

t.test("a leader's policy that changes while it waits for the replicas: it waits for what it registers now, not for the entries it replaced", async (t) => {
  // A new leader whose own volume lags a rename the ready replica already serves starts waiting
  // for the old name (which no replica will serve again); here the leader renames, then its
  // volume goes back to the old name the ready replica serves: the same stale wait.
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-leader', 'kas-ready']);
  const volumes = { leader: new AtomicWriter(join(cluster.dir, 'volume-leader')), ready: new AtomicWriter(join(cluster.dir, 'volume-ready')) };
  await volumes.leader.write({ 'policy.yaml': OLD });
  await volumes.ready.write({ 'policy.yaml': OLD });
  const env = { WATCH_POLL_INTERVAL: '300ms' };
  const leader = await cluster.startReplica(t, 'kas-leader', ['--policy-file', join(cluster.dir, 'volume-leader', 'policy.yaml')], env);
  const ready = await cluster.startReplica(t, 'kas-ready', ['--policy-file', join(cluster.dir, 'volume-ready', 'policy.yaml')], env);
  onlyReadyEndpoint(cluster, ready.port);

  const renamedMark = leader.child.logs.length;
  await volumes.leader.write({ 'policy.yaml': RENAMED });
  const waitingMsg = 'a new entry is to be registered: waiting until every ready replica serves it (their policy volumes update apart)';
  const waiting = await leader.child.waitForLog((line) => leader.child.logs.indexOf(line) >= renamedMark && line.msg === waitingMsg, EVENT_MS);
  t.match(waiting['lacking'], [{ entries: ['validating/require-team-r1'] }], 'the leader waits for the ready replica to serve the renamed entry');
  const mark = leader.child.logs.length;
  const revertedAt = performance.now();
  await volumes.leader.write({ 'policy.yaml': OLD });
  // The bound (90 s) is past EVENT_MS: a wait still for require-team-r1 fails here.
  const done = await leader.child.waitForLog((line) => leader.child.logs.indexOf(line) >= mark && line.msg === 'every ready replica serves the new entries; registering them', EVENT_MS);
  t.ok(performance.now() - revertedAt < EVENT_MS, `the wait ended ${Math.round(performance.now() - revertedAt)} ms after the leader's policy went back (waited ${String(done['waitedMs'])} ms in all)`);
  t.notOk(
    leader.child.logs.some((line) => /still do not serve a new entry within the bound/.test(String(line.msg))),
    'no registration past the bound',
  );
  await until(() => cluster.registeredValidatingPaths().some((path) => /require-team$/.test(path)), EVENT_MS);
  t.notOk(cluster.registeredValidatingPaths().some((path) => path.includes('require-team-r1')), 'the registration routes to what the policy says now');
  t.equal((await ready.child.stop()).code, 0);
  t.equal((await leader.child.stop()).code, 0);
});

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
