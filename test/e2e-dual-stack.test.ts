// In a pod the listeners bind `::`: IPv6 and IPv4 clients alike reach the webhook and the probes,
// so an IPv6-only or IPv6-first cluster (kube-apiserver and the kubelet dial the pod's IPv6
// address) works as an IPv4 one does. On a kernel without IPv6 the server binds 0.0.0.0 instead
// and says so. Compiled server, real sockets, the API double's admission caller over IPv6.
import t from 'tap';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createAdmissionCaller } from '../local-cluster/admission-caller/index.js';
import { ClusterHarness, NAME, NAMESPACE, podFixture, POD_KIND, POD_RESOURCE } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';

/** What the kubelet puts into every container: the server then knows it runs in a pod. */
const IN_A_POD = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
const NO_IPV6_KERNEL = { NODE_OPTIONS: `--import=${pathToFileURL(join(repositoryRoot(), 'dist', 'test', 'support', 'server', 'no-ipv6-kernel.js')).href}` };

/** The machine's own global or unique-local IPv6 addresses: what a pod IP in an IPv6 cluster is. */
const podLikeIpv6 = Object.values(networkInterfaces())
  .flat()
  .filter((a) => a !== undefined && a.family === 'IPv6' && !a.internal && !a.address.startsWith('fe80'))
  .map((a) => a!.address);

/** 'open' when a TCP connection to host:port is accepted, else the error code. */
function tcpReach(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: EVENT_MS });
    socket.once('connect', () => (socket.destroy(), resolve('open')));
    socket.once('timeout', () => (socket.destroy(), resolve('timeout')));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

async function probe(host: string, port: number, path: string): Promise<number> {
  const response = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`, { signal: AbortSignal.timeout(EVENT_MS) });
  return response.status;
}

t.test('in a pod, both listeners take IPv6 and IPv4; kube-apiserver calls over IPv6 are answered', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', [], IN_A_POD);
  t.match(replica.child.logs.find((l) => l.msg === 'webhook server listening'), { host: '::' });
  t.match(replica.child.logs.find((l) => l.msg === 'health server listening'), { host: '::' });
  for (const host of ['::1', '127.0.0.1', ...podLikeIpv6]) {
    t.equal(await probe(host, replica.healthPort, '/readyz'), 200, `readiness probe over ${host}`);
    t.equal(await tcpReach(host, replica.port), 'open', `webhook port over ${host}`);
  }
  const caller = createAdmissionCaller({ api: cluster.api, resolveService: () => ({ host: '::1', port: replica.port }) });
  t.teardown(() => caller.close());
  const denied = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }, { securityContext: { privileged: true } }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(denied.allowed, false, 'an enforcing rule answered over IPv6 (the example policy denies privileged containers)');
  t.ok(caller.calls.length > 0, 'webhooks were called');
  t.same(
    caller.calls.filter((c) => c.outcome === 'error'),
    [],
    'every call over IPv6 got an answer',
  );
  t.equal((await replica.child.stop()).code, 0);
});

t.test('on a kernel without IPv6, the listeners bind 0.0.0.0 and the server says why', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', [], { ...IN_A_POD, ...NO_IPV6_KERNEL });
  t.match(replica.child.logs.find((l) => l.msg === 'this host has no IPv6; listening on IPv4 addresses only'), { level: 'warn', wanted: '::', host: '0.0.0.0', error: /^EAFNOSUPPORT/ });
  t.match(replica.child.logs.find((l) => l.msg === 'webhook server listening'), { host: '0.0.0.0' });
  t.match(replica.child.logs.find((l) => l.msg === 'health server listening'), { host: '0.0.0.0' });
  t.equal(await probe('127.0.0.1', replica.healthPort, '/readyz'), 200, 'ready, over IPv4');
  t.not(await tcpReach('::1', replica.port), 'open', 'nothing on IPv6: the fallback is real');
  t.ok(cluster.api.store.get('validatingwebhookconfigurations', undefined, NAME), 'registered');
  t.ok(cluster.api.store.get('leases', NAMESPACE, `${NAME}-leader`));
  t.equal((await replica.child.stop()).code, 0);
});

t.test('--host still decides: an explicit IPv4 address is bound as given, with no IPv6', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--host', '127.0.0.1'], IN_A_POD);
  t.match(replica.child.logs.find((l) => l.msg === 'webhook server listening'), { host: '127.0.0.1' });
  t.not(await tcpReach('::1', replica.healthPort), 'open');
  t.equal((await replica.child.stop()).code, 0);
});
