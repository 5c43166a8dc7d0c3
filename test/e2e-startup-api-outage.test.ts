// An apiserver restart while a pod starts (a control-plane upgrade) must not end the pod: it stays
// up and not Ready, retrying, and becomes Ready and takes part once the API answers again. Every
// replica reads the API server's version before its first write and tries the owner ClusterRole
// once, only a refusal counting; only a leader waits for the owner, so a follower is not held up
// by it. Compiled server in files mode (its TLS needs no API), API double.
import t from 'tap';
import { join } from 'node:path';
import { servingSans } from '../src/tls/sans.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { EVENT_MS, STARTUP_MS } from './support/deadline.js';
import { ClusterHarness, NAME, NAMESPACE, type SpawnedReplica } from './support/kube/cluster-harness.js';
import { makeCa, makeLeaf } from './support/tls/tls-fixtures.js';

const SANS = servingSans({ serviceName: NAME, namespace: NAMESPACE, local: false, extraSans: [] });
/**
 * Longer than the startup reads used to retry (8 attempts, about 9 s of backoff) before the pod
 * exited; counted from when the replica has proved its TLS and turns to the API.
 */
const OUTAGE_MS = 15_000;

async function filesModeVolume(cluster: ClusterHarness): Promise<string> {
  const ca = await makeCa(new Date(), 365, 'outage ca');
  const leaf = await makeLeaf(ca, SANS, new Date(), 90);
  const volume = new AtomicWriter(join(cluster.dir, 'serving-cert'));
  await volume.write({ 'tls.crt': leaf.certPem, 'tls.key': leaf.keyPem, 'ca.crt': ca.certPem });
  return volume.targetDir;
}

async function readiness(healthPort: number): Promise<number> {
  return (await fetch(`http://127.0.0.1:${healthPort}/readyz`, { signal: AbortSignal.timeout(EVENT_MS) })).status;
}

/** Samples /readyz until `ms` have passed (or the process exits); every answer it got. */
async function readinessFor(replica: SpawnedReplica, healthPort: number, ms: number): Promise<number[]> {
  const seen: number[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until && replica.child.process.exitCode === null) {
    seen.push(await readiness(healthPort));
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return seen;
}

t.test('the API down while the pod starts: up and not Ready throughout, then Ready, leader and registered', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const certDir = await filesModeVolume(cluster);
  await cluster.api.close(); // the apiserver restarts: connections refused
  const replica = cluster.spawnReplica(t, 'kas-a', ['--tls-mode', 'files', '--cert-dir', certDir]);
  const { healthPort } = await replica.child.listening(STARTUP_MS);
  await replica.child.waitForMessage('self-check passed', STARTUP_MS);

  const during = await readinessFor(replica, healthPort, OUTAGE_MS);
  t.equal(replica.child.process.exitCode, null, `still running after ${OUTAGE_MS} ms of outage`);
  t.ok(during.length > 0 && during.every((status) => status === 503), 'not Ready while the API does not answer');
  t.notOk(replica.child.logs.some((l) => l.msg === 'ready'));

  await cluster.api.reopen();
  await replica.child.waitForMessage('ready', STARTUP_MS);
  t.equal(await readiness(healthPort), 200, 'Ready once the API answers');
  t.match(replica.child.logs.find((l) => l.msg === 'registered as the leader'), { role: 'leader' });
  t.match(cluster.configuration('validating'), { metadata: { ownerReferences: [{ kind: 'ClusterRole', name: NAME }] } }, 'registered, owned by the ClusterRole');
  t.ok(replica.child.logs.some((l) => l.msg === 'API server version'), 'the leader read the version');
  t.equal((await replica.child.stop()).code, 0);
});

t.test('a follower does not wait on the owner read; it reads it until it succeeds once it leads', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a', 'kas-b']);
  const certDir = await filesModeVolume(cluster);
  // Another replica holds the Lease; reading the owner ClusterRole fails for now.
  const now = new Date().toISOString().replace(/\.\d+Z$/, '.000000Z');
  cluster.api.store.put('leases', {
    metadata: { name: `${NAME}-leader`, namespace: NAMESPACE },
    spec: { holderIdentity: 'kas-b', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now, leaseTransitions: 0 },
  } as never);
  cluster.api.faults.add({ resource: 'clusterroles', verb: 'get' }, { status: 503 });
  const replica = await cluster.startReplica(t, 'kas-a', ['--tls-mode', 'files', '--cert-dir', certDir]);
  t.equal(await readiness(replica.healthPort), 200, 'Ready as a follower');
  t.match(replica.child.logs.find((l) => l.msg === 'serving as a follower'), { role: 'follower' });
  t.same(
    cluster.api.requests.filter((r) => r.resource === 'clusterroles').map((r) => r.status),
    [503],
    'the owner was read once at start, and the 503 not waited out',
  );
  t.ok(replica.child.logs.some((l) => l.msg === 'API server version'), 'the version is read at start, before anything is written');

  // kas-b goes away and hands the Lease over: kas-a leads, and does the leader's reads first.
  const lease = cluster.api.store.get('leases', NAMESPACE, `${NAME}-leader`) as { spec: Record<string, unknown> };
  cluster.api.store.update('leases', { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 } } as never);
  await replica.child.waitForMessage('became the leader', EVENT_MS);
  await replica.child.waitForMessage('reading the owner ClusterRole failed; retrying', EVENT_MS);
  t.notOk(cluster.configuration('validating'), 'nothing written before the owner is known (a write would drop the ownerReference)');
  cluster.api.faults.clear();
  const stored = await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, (o) => o !== undefined, { timeoutMs: EVENT_MS });
  t.match(stored, { metadata: { ownerReferences: [{ kind: 'ClusterRole', name: NAME }] } }, 'registered with the owner');
  t.equal(await readiness(replica.healthPort), 200);
  t.equal((await replica.child.stop()).code, 0);
});
