/**
 * A server container started detached on the host network: the ports it logged, once /readyz
 * answers 200 on the health one.
 */
import { docker } from './docker.js';

/** The ports the server logged, then /readyz polled on the health one; fails early, with the container's logs, if it exits. */
export async function waitUntilReady(container: string, timeoutMs: number): Promise<{ port: number; healthPort: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const logs = (await docker(['logs', container], 60_000, { allowFailure: true })).stdout;
    const port = loggedPort(logs, 'webhook server listening');
    const healthPort = loggedPort(logs, 'health server listening');
    const ready =
      healthPort !== undefined &&
      (await fetch(`http://127.0.0.1:${healthPort}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
        (response) => response.status === 200,
        () => false,
      ));
    if (ready && port !== undefined) return { port, healthPort };
    const running = (await docker(['inspect', '--format', '{{ .State.Running }}', container])).stdout.trim();
    if (running !== 'true' || Date.now() > deadline) {
      const tail = await docker(['logs', '--tail', '30', container], 60_000, { allowFailure: true });
      throw new Error(`${container} ${running === 'true' ? `not ready within ${timeoutMs} ms` : 'exited'}; its logs:\n${tail.stdout}${tail.stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The port of the log line with this message, once the server has written it. */
function loggedPort(logs: string, msg: string): number | undefined {
  for (const text of logs.split('\n')) {
    if (!text.includes(`"msg":"${msg}"`)) continue;
    const port = (JSON.parse(text) as { port?: unknown }).port;
    if (typeof port === 'number' && port > 0) return port;
  }
  return undefined;
}
