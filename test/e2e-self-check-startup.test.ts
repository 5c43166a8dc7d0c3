// The compiled server's self-check dial to its own listener is routed to a listener the test
// controls (test/support/kube/intercept-service-dial.ts), which gets one thing wrong each time. Every
// replica must fail its startup for that reason within a realistic 2 s self-check deadline, and
// nothing may be registered: no configuration, no Lease.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { interceptServiceDial } from './support/server/child-server.js';
import { ClusterHarness, NAME, NAMESPACE, type Cleanups, type SpawnedReplica } from './support/kube/cluster-harness.js';
import { EXPECTED_REASON, IMPOSTOR_KINDS, startImpostor, type Impostor, type ImpostorOptions } from './support/tls/self-check-impostors.js';
import { createTestCa, type TestCa } from './support/tls/test-certs.js';

const SERVICE_HOST = `${NAME}.${NAMESPACE}.svc`;
const SERVICE_NAMES = [NAME, `${NAME}.${NAMESPACE}`, SERVICE_HOST, `${SERVICE_HOST}.cluster.local`];

/**
 * A replica in files mode on material of `trustedCa` (so the caBundle it trusts and registers is
 * that CA), whose self-check dial is routed to an impostor of `kind`.
 */
async function spawnBehindImpostor(t: Cleanups, cluster: ClusterHarness, kind: ImpostorOptions['kind'], trustedCa: TestCa): Promise<{ replica: SpawnedReplica; impostor: Impostor }> {
  const impostor = await startImpostor(t, { kind, trustedCa, serviceHost: SERVICE_HOST });
  const certDir = join(cluster.dir, `files-${kind}`);
  await mkdir(certDir, { recursive: true });
  const leaf = trustedCa.issue({ commonName: SERVICE_HOST, hosts: SERVICE_NAMES, usage: 'server' });
  await Promise.all([
    writeFile(join(certDir, 'tls.crt'), leaf.certPem),
    writeFile(join(certDir, 'tls.key'), leaf.keyPem, { mode: 0o600 }),
    writeFile(join(certDir, 'ca.crt'), trustedCa.certPem),
  ]);
  const args = ['--self-check-timeout', '2s', '--tls-mode', 'files', '--cert-dir', certDir];
  return { impostor, replica: cluster.spawnReplica(t, `kas-${kind}`, args, interceptServiceDial(SERVICE_HOST, impostor.port)) };
}

t.test('a wrong CA, no service name, a non-200 answer, a wrong uid, a silent listener: each startup fails and nothing is registered', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(IMPOSTOR_KINDS.map((kind) => `kas-${kind}`));
  // The files-mode CA the server registers as caBundle; the impostors that should be trusted use it.
  const trustedCa = createTestCa('the registered CA');
  const runs = await Promise.all(IMPOSTOR_KINDS.map(async (kind) => ({ kind, ...(await spawnBehindImpostor(t, cluster, kind, trustedCa)) })));
  const exits = await Promise.all(runs.map(({ replica }) => replica.child.exit()));

  for (const [index, { kind, impostor, replica }] of runs.entries()) {
    t.equal(exits[index]!.code, 1, `${kind}: exit 1`);
    const failure = replica.child.logs.find((l) => l.msg === 'startup failed; shutting down');
    t.match(failure, { error: /^self-check failed: no valid answer .* within 2000 ms/ }, `${kind}: the self-check failed the startup`);
    t.match(failure?.['error'], EXPECTED_REASON[kind], `${kind}: for the reason the listener gave`);
    t.ok(impostor.connections >= 1, `${kind}: the self-check reached the listener in its path (${impostor.connections} connections)`);
    t.notOk(replica.child.logs.some((l) => l.msg === 'self-check passed'), `${kind}: never passed`);
  }

  const writes = cluster.api.requests.filter((r) => ['create', 'update', 'patch'].includes(r.verb ?? '') && (r.resource?.endsWith('webhookconfigurations') || r.resource === 'leases'));
  t.same(writes.map((r) => `${r.verb} ${r.resource}/${r.name ?? ''}`), [], 'no configuration and no Lease was ever written');
  t.notOk(cluster.configuration('validating'), 'no validating configuration');
  t.notOk(cluster.configuration('mutating'), 'no mutating configuration');
  t.notOk(cluster.api.store.get('leases', NAMESPACE, `${NAME}-leader`), 'no Lease');
});

t.test('the control: a listener in the same path that gets everything right passes the self-check, and the replica registers', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-honest']);
  const { replica, impostor } = await spawnBehindImpostor(t, cluster, 'honest', createTestCa('the registered CA'));
  await ClusterHarness.ready(replica);
  t.ok(replica.child.logs.some((l) => l.msg === 'self-check passed'), 'the self-check passed');
  t.ok(impostor.connections >= 1, `through the listener in its path (${impostor.connections} connections)`);
  await replica.child.waitForMessage('registered as the leader');
  t.ok(cluster.configuration('validating'), 'and it registered');
});
