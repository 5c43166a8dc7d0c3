import https from 'node:https';
import t from 'tap';
import type { ConnectionLimits } from '../src/server/connections.js';
import { createTestCa, podReview, request, serve, validating } from './support/server/server-harness.js';

/**
 * The socket inactivity limit (socketIdleTimeoutMs) is enforced by a sweep over the connections
 * with a request in flight, not by a per-socket timer: a request on which no byte moves for that
 * long loses its connection, an idle kept-alive connection is left to the keep-alive timeout.
 */
const ca = createTestCa();

const LIMITS: Partial<ConnectionLimits> = {
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 5_000,
  keepAliveTimeoutMs: 60_000,
  socketIdleTimeoutMs: 1_000,
};
/** Bounds with room for a busy machine: the point is "cut, and long before the handler's own deadline". */
const CUT_WITHIN_MS = 10_000;

t.test('a request whose handler stalls with no byte moving is cut after the inactivity limit', async (t) => {
  let release = (): void => undefined;
  const stalled = new Promise<void>((resolve) => (release = resolve));
  const served = await serve([validating('stall', async () => stalled.then(() => ({ allowed: true })))], { ca, connectionLimits: LIMITS });
  t.teardown(async () => {
    release();
    await served.server.close(1_000);
  });
  const started = performance.now();
  // ?timeout=30s: the handler's own deadline (29 s) is far beyond the inactivity limit.
  const outcome = await request(served.port, '/validate/stall?timeout=30s', podReview(), { ca: ca.certPem }).then(
    (reply) => `answered ${reply.status}`,
    (error: Error) => error.message,
  );
  const ms = performance.now() - started;
  t.match(outcome, /socket hang up|ECONNRESET/, `the connection was cut (${outcome})`);
  t.ok(ms >= 900, `not before the limit: ${Math.round(ms)} ms`);
  t.ok(ms < CUT_WITHIN_MS, `long before the handler's deadline: ${Math.round(ms)} ms`);
});

t.test('an idle kept-alive connection outlives the inactivity limit and is reused', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca, connectionLimits: LIMITS });
  t.teardown(() => served.server.close(1_000));
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const first = await request(served.port, '/validate/allow?timeout=5s', podReview(), { ca: ca.certPem, agent });
  t.equal(first.status, 200);
  // Three times the inactivity limit with no request in flight: only the keep-alive timeout may close it.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  t.equal(served.server.openConnections(), 1, 'the idle connection is still open');
  const second = await request(served.port, '/validate/allow?timeout=5s', podReview(), { ca: ca.certPem, agent });
  t.equal(second.status, 200);
  t.equal(second.localPort, first.localPort, 'the same connection answered the second review');
});

t.test('a slow handler whose answer comes within the limit is answered', async (t) => {
  const served = await serve(
    [validating('slow', async () => new Promise((resolve) => setTimeout(() => resolve({ allowed: true }), 300)))],
    { ca, connectionLimits: { ...LIMITS, socketIdleTimeoutMs: 5_000 } },
  );
  t.teardown(() => served.server.close(1_000));
  const reply = await request(served.port, '/validate/slow?timeout=10s', podReview(), { ca: ca.certPem });
  t.equal(reply.status, 200);
});
