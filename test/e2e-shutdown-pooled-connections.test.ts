/**
 * Shutdown with pooled connections, as kube-apiserver keeps them: two replicas of the compiled
 * server behind a Service address, a client pool shared by many callers that reuses idle
 * connections and opens new ones (to whichever replica the Service picks) when the server closed
 * one. One replica gets SIGTERM, leaves the endpoints during its shutdown delay, tears down and
 * closes. No call may fail, and from SIGTERM on its answers must wind the pooled connections down.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { logTimeMs, startLocalServer } from './support/server/child-server.js';
import { EXIT_MARGIN_MS } from './support/deadline.js';
import { runPooledLoad, ServiceAddressAgent, type PooledCall } from './support/server/pooled-client.js';
import { podReview } from './support/server/server-harness.js';

const SERVICE_HOST = 'kube-admission-server.default.svc';
const SHUTDOWN_DELAY_MS = 4000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('pooled keep-alive callers see no failed request through SIGTERM, the delay and the close', async (t) => {
  const certDir = await mkdtemp(join(tmpdir(), 'kas-pooled-'));
  t.teardown(() => rm(certDir, { recursive: true, force: true }));
  // One CA for both (the second start reuses the material the first persisted), as replicas share theirs.
  const leaving = await startLocalServer(t, certDir, ['--shutdown-delay', `${SHUTDOWN_DELAY_MS}ms`, '--shutdown-timeout', '5s']);
  const staying = await startLocalServer(t, certDir);
  const caPem = await readFile(join(certDir, 'ca.crt'), 'utf8');

  let endpoints = [leaving.port, staying.port];
  const agent = new ServiceAddressAgent(() => endpoints, {});
  t.teardown(() => agent.destroy());
  const stop = new AbortController();
  const load = runPooledLoad(
    { agent, workers: 24, path: '/validate/deny-privileged?timeout=5s', body: JSON.stringify(podReview()), serverName: SERVICE_HOST, caPem, timeoutMs: 15_000 },
    stop.signal,
  );
  await sleep(1000);

  const signalled = performance.now();
  leaving.child.process.kill('SIGTERM');
  // The endpoints controller and kube-proxy take a moment: new connections still reach the
  // leaving replica for a while, but always inside its shutdown delay (which begins when the
  // server handles the signal, so never before this).
  const leaveEndpoints = setTimeout(() => (endpoints = [staying.port]), SHUTDOWN_DELAY_MS - 1500);
  t.teardown(() => clearTimeout(leaveEndpoints));
  const exit = await leaving.child.exit(SHUTDOWN_DELAY_MS + 5000 + EXIT_MARGIN_MS * 4);
  await sleep(500);
  stop.abort();
  const calls = await load;
  const exitMs = exit.atMs - signalled;
  // When the server handled SIGTERM, by its own clock (the same machine's; its log times are whole
  // milliseconds): the shutdown starts in that same step.
  const handled = leaving.child.logs.find((l) => l.msg === 'shutdown requested');
  if (!handled) throw new Error('the leaving replica never logged "shutdown requested"');
  const draining = logTimeMs(handled) + 1 - performance.timeOrigin;

  const failed = calls.filter((c) => c.error !== undefined || c.status !== 200);
  t.same(failed.slice(0, 5).map((c) => ({ ...c, sentAfterSignalMs: Math.round(c.sentAt - signalled) })), [], `no failed call among ${calls.length} (${failed.length} failed)`);
  const afterDrain = calls.filter((c: PooledCall) => c.port === leaving.port && c.sentAt >= draining);
  t.ok(afterDrain.length > 0, `the leaving replica answered ${afterDrain.length} calls sent after it began ending connections (${Math.round(draining - signalled)} ms after the signal)`);
  t.same(
    afterDrain.filter((c) => c.connection !== 'close').map((c) => ({ sentAfterMs: Math.round(c.sentAt - draining), connection: c.connection, reused: c.reusedConnection })).slice(0, 5),
    [],
    'every answer after SIGTERM carries Connection: close',
  );
  t.ok(afterDrain.some((c) => !c.reusedConnection), 'new connections were still accepted and answered during the delay');
  t.ok(calls.filter((c) => c.port === leaving.port && c.sentAt < signalled).some((c) => c.connection === 'keep-alive'), 'before SIGTERM, connections were kept alive');

  t.equal(exit.code, 0, 'clean exit');
  t.ok(exitMs >= SHUTDOWN_DELAY_MS - 100, `the delay was served (${Math.round(exitMs)} ms)`);
  t.ok(exitMs < SHUTDOWN_DELAY_MS + 5000 + EXIT_MARGIN_MS, `exited within the delay plus the deadline plus the margin (${Math.round(exitMs)} ms)`);
  t.match(leaving.child.logs.find((l) => l.msg === 'shutdown complete'), { steps: { 'server-close': /^ok/ } }, 'the close drained without destroying anything');
  t.equal((await staying.child.stop()).code, 0);
});
