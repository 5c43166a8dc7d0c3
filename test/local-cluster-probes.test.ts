// The local kubelet's startup probe: failureThreshold failures restart the container, times the
// kubelet's --slow-start allowance; readiness waits for the startup probe. Probes run against a
// real closed port (connection refused) and a real listener.
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import t from 'tap';
import { EVENT_MS, within } from './support/deadline.js';
import { ContainerProber, type ProbeKind } from './support/local-cluster/kubelet/probes.js';

async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** Runs a prober until the kubelet would kill the container; resolves with the Unhealthy events before it. */
function failuresUntilKill(container: Record<string, unknown>, slowStart: number): Promise<{ kind: ProbeKind; unhealthy: number }> {
  let unhealthy = 0;
  let prober: ContainerProber | undefined;
  const killed = new Promise<{ kind: ProbeKind; unhealthy: number }>((resolve) => {
    prober = new ContainerProber(container, '127.0.0.1', { changed: () => undefined, kill: (kind) => resolve({ kind, unhealthy }), unhealthy: () => (unhealthy += 1) }, slowStart);
  });
  prober?.start();
  return within(EVENT_MS, 'the startup probe giving up', killed).finally(() => prober?.stop());
}

t.test('a startup probe gives up after failureThreshold failures, times --slow-start', async (t) => {
  const port = await closedPort();
  const container = { name: 'server', startupProbe: { tcpSocket: { port }, periodSeconds: 0.05, failureThreshold: 2 } };
  t.same(await failuresUntilKill(container, 1), { kind: 'startup', unhealthy: 2 }, 'as the Pod says');
  t.same(await failuresUntilKill(container, 3), { kind: 'startup', unhealthy: 6 }, 'three times the threshold');
});

t.test('liveness keeps its own threshold under --slow-start', async (t) => {
  const port = await closedPort();
  const container = { name: 'server', livenessProbe: { tcpSocket: { port }, periodSeconds: 0.05, failureThreshold: 2 } };
  t.same(await failuresUntilKill(container, 3), { kind: 'liveness', unhealthy: 2 });
});
