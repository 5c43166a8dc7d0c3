// The compiled server compiles matchConditions for the kube-apiserver it reads at start (GET
// /version from the API double): a 1.30 kube-apiserver compiles a configuration written to it with
// the 1.29 CEL library, which has no ip(). Such a policy fails the start as an invalid
// configuration naming the webhook, the condition and the version, before anything is written
// (kube-apiserver would answer the write with 422 Invalid); a later version of the file with one
// is rejected and the previous one stays. Every replica reads the version before its first write,
// a follower too: such a policy fails its start as well, rather than being served until it leads.
import t from 'tap';
import { join } from 'node:path';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { EVENT_MS, EXIT_MS } from './support/deadline.js';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';

const policy = (condition: string): string =>
  [
    'apiVersion: kube-admission-server/v1',
    'kind: Policy',
    // One webhook per entry: what is registered for require-team is its own matchConditions.
    'grouping: none',
    'webhooks:',
    '  - name: require-team',
    '    kind: requireLabels',
    '    params: { labels: [{ key: team }] }',
    '    matchConditions:',
    `      - { name: pod-network, expression: "${condition}" }`,
    '',
  ].join('\n');
const NEEDS_1_30_LIBRARY = "ip('10.0.0.1').family() == 4 && request.userInfo.username != ''";
const ANY_VERSION = "request.userInfo.username != 'system:admin'";
const REFUSED = /matchCondition "pod-network" of webhook "require-team": CEL expression does not compile for kube-apiserver 1\.30, which compiles a new matchCondition with the Kubernetes 1\.29 CEL library/;

type Configuration = { webhooks: { name: string; matchConditions?: { name: string; expression: string }[] }[] };

t.test('kube-apiserver 1.30: a matchCondition it would refuse fails the start (exit 2), naming it; nothing is written', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.30.6' });
  cluster.seedDeployment(['kas-a']);
  const volume = new AtomicWriter(join(cluster.dir, 'policy-volume'));
  await volume.write({ 'policy.yaml': policy(NEEDS_1_30_LIBRARY) });
  const replica = cluster.spawnReplica(t, 'kas-a', ['--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml')]);
  const exit = await replica.child.exit(EXIT_MS * 6);
  t.equal(exit.code, 2, 'an invalid configuration');
  const failed = replica.child.logs.find((l) => l.msg === 'startup failed; shutting down');
  t.match(failed?.['problems'], [REFUSED]);
  t.match(replica.child.logs.find((l) => l.msg === 'API server version'), { version: 'v1.30.6' });
  const writes = cluster.api.requests.filter((r) => r.resource?.endsWith('webhookconfigurations') && r.verb !== 'get' && r.verb !== 'list' && r.verb !== 'watch');
  t.same(writes, [], 'no configuration written, so no 422 to read back');
  t.notOk(cluster.configuration('validating'));
});

t.test('kube-apiserver 1.30: a later version of the file with such a matchCondition is rejected, the registered one stays', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.30.6' });
  cluster.seedDeployment(['kas-a']);
  const volume = new AtomicWriter(join(cluster.dir, 'policy-volume'));
  await volume.write({ 'policy.yaml': policy(ANY_VERSION) });
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms' });
  const registered = () => cluster.configuration<Configuration>('validating')?.webhooks.find((w) => w.name.startsWith('require-team.'))?.matchConditions;
  t.same(registered(), [{ name: 'pod-network', expression: ANY_VERSION }], 'what 1.30 compiles is registered');

  await volume.write({ 'policy.yaml': policy(NEEDS_1_30_LIBRARY) });
  const rejected = await replica.child.waitForMessage('new policy version rejected; keeping the previous one', EVENT_MS);
  t.match(rejected['problems'], [/policy\.yaml:9:42: /]);
  t.match(rejected['problems'], [REFUSED]);
  t.same(registered(), [{ name: 'pod-network', expression: ANY_VERSION }], 'the registered configuration is unchanged');
  t.notOk(cluster.api.requests.some((r) => r.status === 422), 'kube-apiserver was never asked to store it');
  t.equal((await replica.child.stop()).code, 0);
});

t.test('kube-apiserver 1.30: a replica that would start as a follower fails the same way, before anything is written', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.30.6' });
  cluster.seedDeployment(['kas-a', 'kas-b']);
  const now = new Date().toISOString().replace(/\.\d+Z$/, '.000000Z');
  cluster.api.store.put('leases', {
    metadata: { name: `${NAME}-leader`, namespace: NAMESPACE },
    spec: { holderIdentity: 'kas-b', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now, leaseTransitions: 0 },
  } as never);
  const volume = new AtomicWriter(join(cluster.dir, 'policy-volume'));
  await volume.write({ 'policy.yaml': `${policy(NEEDS_1_30_LIBRARY)}  - name: deny-privileged\n    kind: denyPrivileged\n` });
  const revision = cluster.api.store.currentRevision;
  const replica = cluster.spawnReplica(t, 'kas-a', ['--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml')]);
  const exit = await replica.child.exit(EXIT_MS * 6);
  t.equal(exit.code, 2, 'an invalid configuration');
  t.match(replica.child.logs.find((l) => l.msg === 'startup failed; shutting down')?.['problems'], [REFUSED]);
  t.notOk(replica.child.logs.some((l) => l.msg === 'serving as a follower'), 'never served as a follower');
  t.equal(cluster.api.store.currentRevision, revision, 'nothing written: not the Secret, not the Lease');
});
