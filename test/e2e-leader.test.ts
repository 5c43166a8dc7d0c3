import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { EVENT_MS, EXIT_MARGIN_MS } from './support/deadline.js';
import { ClusterHarness, FAST_LEASE, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import { servedBy } from './support/tls/served-certificate.js';

const configurationWrites = (cluster: ClusterHarness, since: number) =>
  cluster.api.requests.filter((r) => (r.verb === 'update' || r.verb === 'create') && r.resource?.endsWith('webhookconfigurations') && r.startedAt > since);

t.test('two replicas starting together: one CA, one leader, one set of configurations, no flip-flop', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a', 'kas-b']);
  const [a, b] = await Promise.all([cluster.startReplica(t, 'kas-a'), cluster.startReplica(t, 'kas-b')]);
  const leaders = [a, b].filter((r) => r.child.logs.some((l) => l.msg === 'registered as the leader'));
  t.equal(leaders.length, 1, 'exactly one leader registered');

  const secret = cluster.api.store.get('secrets', NAMESPACE, `${NAME}-certs`) as { data: Record<string, string> };
  const caPem = Buffer.from(secret.data['ca.crt']!, 'base64').toString('utf8');
  const ca = new X509Certificate(caPem);
  for (const replica of [a, b]) {
    const { served } = await servedBy(replica.port, `${NAME}.${NAMESPACE}.svc`, caPem);
    t.ok(served.verify(ca.publicKey), `${replica.podName} serves a certificate signed by the one shared CA`);
  }

  const settled = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 3000)); // a resync period and more
  t.same(configurationWrites(cluster, settled), [], 'no writes once settled: the replicas do not fight over the configurations');
  t.equal((await a.child.stop()).code, 0);
  t.equal((await b.child.stop()).code, 0);
});

t.test('leader killed with SIGKILL: the standby takes over after the lease expires and reconciles', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a', 'kas-b']);
  const a = await cluster.startReplica(t, 'kas-a', [], FAST_LEASE);
  const b = await cluster.startReplica(t, 'kas-b', [], FAST_LEASE);
  t.ok(a.child.logs.some((l) => l.msg === 'registered as the leader'));
  const killedAt = performance.now();
  await a.child.stop('SIGKILL');
  await b.child.waitForMessage('became the leader', EVENT_MS);
  const tookOverMs = performance.now() - killedAt;
  t.ok(tookOverMs < 3000 + 2 * EXIT_MARGIN_MS, `took over ${Math.round(tookOverMs)} ms after the kill (lease 3 s)`);

  const deletedAt = performance.now();
  cluster.api.store.delete('validatingwebhookconfigurations', undefined, NAME);
  await cluster.api.waitForRequest((r) => r.verb === 'create' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > deletedAt, { timeoutMs: EVENT_MS });
  t.ok(cluster.configuration('validating'), 'the new leader restores a deleted configuration');
  t.equal((await b.child.stop()).code, 0);
});
