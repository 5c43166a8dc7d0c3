// The local kubelet's startup probe: failureThreshold failures restart the container, times the
// kubelet's --slow-start allowance; readiness waits for the startup probe and runs as soon as it
// succeeds. Probes run against a real closed port (connection refused) and a real listener.
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import t from 'tap';
import { EVENT_MS, within } from './support/deadline.js';
import { ContainerProber, type ProbeKind } from '../local-cluster/cluster/kubelet/probes.js';

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

t.test('readiness runs as soon as the startup probe succeeds, not a period later', async (t) => {
  const server = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const { port } = server.address() as AddressInfo;
  // A readiness period of an hour: only the run the startup probe's success triggers can make it ready in time.
  const container = { name: 'server', startupProbe: { tcpSocket: { port }, periodSeconds: 0.05 }, readinessProbe: { tcpSocket: { port }, periodSeconds: 3600 } };
  let prober: ContainerProber | undefined;
  const states: string[] = [];
  const ready = new Promise<void>((resolve) => {
    prober = new ContainerProber(container, '127.0.0.1', {
      changed: () => {
        states.push(`started=${String(prober?.started)} ready=${String(prober?.ready)}`);
        if (prober?.ready) resolve();
      },
      kill: () => undefined,
      unhealthy: () => undefined,
    });
  });
  prober?.start();
  await within(EVENT_MS, 'readiness after the startup probe', ready).finally(() => prober?.stop());
  t.same(states, ['started=true ready=false', 'started=true ready=true'], 'started first, then ready');
});
