/**
 * Pooled connections during the shutdown: from stopKeepAlive() on (SIGTERM) every answer ends
 * its connection, and the close spares a connection that was busy a moment ago, because its
 * caller may be writing the next request on it right now.
 */
import t from 'tap';
import { GO_IDLE_CONN_TIMEOUT_MS } from '../local-cluster/admission-caller/go-transport-agent.js';
import { RawConnection } from './support/server/raw-connection.js';
import { createTestCa, request, serve, validating, podReview } from './support/server/server-harness.js';
import { EVENT_MS } from './support/deadline.js';

const ca = createTestCa();

async function exchange(connection: RawConnection, path = '/validate/allow'): Promise<{ status: number; headers: Record<string, string> }> {
  const { head, body } = RawConnection.requestText(path);
  connection.socket.write(head + body);
  return await connection.response();
}

async function connected(port: number): Promise<RawConnection> {
  const connection = new RawConnection(port, ca.certPem);
  await connection.ready();
  return connection;
}

const isOpen = (connection: RawConnection): boolean => !connection.socket.destroyed && connection.socket.readyState === 'open';

t.test('with production limits an idle pooled connection is kept longer than kube-apiserver keeps it, so the caller closes first', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca });
  t.teardown(() => served.server.close(2000));
  const pooled = await connected(served.port);
  const answer = await exchange(pooled);
  const announced = Number(/^timeout=(\d+)$/.exec(answer.headers['keep-alive'] ?? '')?.[1]);
  t.ok(
    announced * 1000 > GO_IDLE_CONN_TIMEOUT_MS,
    `Keep-Alive: ${answer.headers['keep-alive']}: idle connections outlive Go's IdleConnTimeout (${GO_IDLE_CONN_TIMEOUT_MS / 1000} s), which kube-apiserver's webhook transport inherits`,
  );
});

t.test('after stopKeepAlive every answer carries Connection: close and ends its connection; new connections are still served', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca });
  t.teardown(() => served.server.close(2000));
  const pooled = await connected(served.port);
  t.equal((await exchange(pooled)).headers.connection, 'keep-alive', 'kept alive before');

  served.server.stopKeepAlive();
  const onPooled = await exchange(pooled);
  t.equal(onPooled.status, 200, 'a request on the pooled connection is answered normally');
  t.equal(onPooled.headers.connection, 'close');
  await pooled.closed;
  t.pass('and the server closed that connection after the answer');

  const fresh = await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem });
  t.equal(fresh.status, 200, 'a new connection is accepted and answered');
  t.equal(fresh.headers.connection, 'close');
  const notFound = await request(served.port, '/nowhere', podReview(), { ca: ca.certPem });
  t.equal(notFound.status, 404);
  t.equal(notFound.headers.connection, 'close', 'error answers too');
  t.match(served.logs.lines.find((l) => l['msg'] === 'answers now carry Connection: close, so pooled connections wind down before the close'), { level: 30 });
});

t.test('at the close a long-idle connection goes at once, one busy a moment ago still carries its next request', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca, connectionLimits: { evictIdleAfterMs: 1000 } });
  const longIdle = await connected(served.port);
  await exchange(longIdle);
  const neverUsed = await connected(served.port);
  await new Promise((resolve) => setTimeout(resolve, 1200));
  const busy = await connected(served.port);
  await exchange(busy);

  const closing = served.server.close(5000);
  await Promise.all([longIdle.closed, neverUsed.closed]);
  t.pass('connections idle for a second or more (used or not) were closed at once');
  t.ok(isOpen(busy), 'the connection busy a moment ago is still open');
  const next = await exchange(busy);
  t.equal(next.status, 200, "the caller's next request on it is answered, not cut");
  t.equal(next.headers.connection, 'close');
  await busy.closed;
  const result = await closing;
  t.same({ drained: result.drained, destroyedSockets: result.destroyedSockets }, { drained: true, destroyedSockets: 0 });
});

t.test('a connection that stays idle after the close began is closed once idle for a second, well before the deadline', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca, connectionLimits: { evictIdleAfterMs: 1000 } });
  const connection = await connected(served.port);
  await exchange(connection);
  const idleSince = performance.now();
  const result = await served.server.close(10_000);
  const closedAfter = performance.now() - idleSince;
  await connection.closed;
  t.equal(result.drained, true);
  t.ok(closedAfter >= 900, `not cut while idle for less than a second (${Math.round(closedAfter)} ms)`);
  t.ok(closedAfter < 8000, `closed long before the 10 s deadline (${Math.round(closedAfter)} ms)`);
});

t.test('the deadline still bounds everything: a connection kept busy is destroyed at it', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca, connectionLimits: { evictIdleAfterMs: 60_000 } });
  const connection = await connected(served.port);
  await exchange(connection);
  const started = performance.now();
  const result = await served.server.close(400);
  const elapsed = performance.now() - started;
  await connection.closed;
  t.equal(result.drained, false, 'not idle long enough to be closed gracefully: destroyed at the deadline');
  t.equal(result.destroyedSockets, 1);
  t.ok(elapsed >= 350 && elapsed < 3000, `closed at the deadline (${Math.round(elapsed)} ms for 400 ms)`);
});

t.test('draining, a call this replica must send elsewhere (its policy is behind) closes the long-idle pooled connections first, so the retry dials anew', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca, connectionLimits: { evictIdleAfterMs: 1000 }, unknownEntries: { decide: () => 'retry' } });
  t.teardown(() => served.server.close(2000));
  const longIdle = await connected(served.port);
  await exchange(longIdle);
  await new Promise((resolve) => setTimeout(resolve, 1200));

  const asking = await connected(served.port);
  const beforeDrain = await exchange(asking, '/validate/validating-fail-t5/allow.added-later');
  t.equal(beforeDrain.status, 503, 'a retry answer');
  await asking.closed;
  t.ok(isOpen(longIdle), 'while serving, a retry leaves the other pooled connections alone (this replica will catch up)');

  served.server.stopKeepAlive();
  const second = await connected(served.port);
  const draining = await exchange(second, '/validate/validating-fail-t5/allow.added-later');
  t.equal(draining.status, 503);
  t.equal(draining.headers['retry-after'], '0');
  const closed = await Promise.race([longIdle.closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), EVENT_MS))]);
  t.ok(closed, 'draining, the long-idle pooled connection was closed with the retry answer (one busy within the last second is spared, as at the close)');
});
