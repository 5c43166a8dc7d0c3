import { once } from 'node:events';
import tls from 'node:tls';
import t from 'tap';
import { EVENT_MS, EXIT_MARGIN_MS, within } from './support/deadline.js';
import { createTestCa, podReview, request, serve, TEST_SERVER_NAME, validating } from './support/server-harness.js';

const ca = createTestCa();

/** A hand-driven keep-alive connection: write raw HTTP/1.1, read whole responses. */
class RawConnection {
  readonly socket: tls.TLSSocket;
  #buffer = '';
  #waiters: (() => void)[] = [];
  readonly #closed: Promise<void>;

  constructor(port: number) {
    this.socket = tls.connect({ host: '127.0.0.1', port, servername: TEST_SERVER_NAME, ca: ca.certPem });
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.socket.on('error', () => undefined);
    this.#closed = once(this.socket, 'close').then(() => {
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  /** Resolves once the server has closed the connection. */
  get closed(): Promise<void> {
    return within(EVENT_MS, 'the server to close a raw connection', this.#closed);
  }

  async ready(): Promise<void> {
    await within(EVENT_MS, 'the TLS handshake of a raw connection', once(this.socket, 'secureConnect'));
  }

  static requestText(path = '/validate/allow', extraHeaders = ''): { head: string; body: string } {
    const body = JSON.stringify(podReview());
    const head = `POST ${path} HTTP/1.1\r\nHost: ${TEST_SERVER_NAME}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}\r\n`;
    return { head, body };
  }

  /** Next complete response (status, lower-case headers), or rejects when the socket closes first. */
  async response(): Promise<{ status: number; headers: Record<string, string> }> {
    for (;;) {
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine, ...lines] = this.#buffer.slice(0, end).split('\r\n');
        const headers = Object.fromEntries(
          lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
        );
        const length = Number(headers['content-length'] ?? 0);
        if (this.#buffer.length >= end + 4 + length) {
          this.#buffer = this.#buffer.slice(end + 4 + length);
          return { status: Number(statusLine?.split(' ')[1]), headers };
        }
      }
      if (this.socket.destroyed) throw new Error('connection closed before a complete response');
      await within(EVENT_MS, 'the rest of a response on a raw connection', new Promise<void>((resolve) => this.#waiters.push(resolve)));
    }
  }
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

t.test('in-flight requests finish, new connections are refused, then close resolves drained', async (t) => {
  const release = gate();
  const entered = gate();
  const served = await serve(
    [
      validating('slow', async () => {
        entered.open();
        await release.opened;
        return { allowed: true };
      }),
    ],
    { ca },
  );
  t.teardown(() => served.server.close(1000)); // idempotent: a no-op after the test's own close
  const inFlight = request(served.port, '/validate/slow', podReview(), { ca: ca.certPem });
  await entered.opened;
  const closing = served.server.close(5000);
  await t.rejects(request(served.port, '/validate/slow', podReview(), { ca: ca.certPem }), { code: 'ECONNREFUSED' }, 'no new connections');
  release.open();
  const answered = await inFlight;
  t.equal(answered.status, 200);
  t.equal(answered.headers.connection, 'close');
  const result = await closing;
  t.equal(result.drained, true);
  t.equal(result.destroyedSockets, 0);
  t.ok(result.durationMs < 5000);
});

t.test('a request arriving on an open keep-alive connection after close began is answered 200 with Connection: close', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca });
  t.teardown(() => served.server.close(1000)); // idempotent: a no-op after the test's own close
  const connection = new RawConnection(served.port);
  await connection.ready();
  const first = RawConnection.requestText();
  connection.socket.write(first.head + first.body);
  const firstResponse = await connection.response();
  t.equal(firstResponse.status, 200);
  t.equal(firstResponse.headers.connection, 'keep-alive', 'the connection is kept alive before close');

  // The next request has started to arrive (headers only) when close begins. Expect: 100-continue
  // makes the server say when it has parsed them, so the test knows the connection is busy.
  const second = RawConnection.requestText('/validate/allow', 'Expect: 100-continue\r\n');
  connection.socket.write(second.head);
  t.equal((await connection.response()).status, 100, 'the server has the request headers');
  const closing = served.server.close(5000);
  connection.socket.write(second.body);
  const secondResponse = await connection.response();
  t.equal(secondResponse.status, 200, 'answered normally, not 503');
  t.equal(secondResponse.headers.connection, 'close');
  await connection.closed;
  const result = await closing;
  t.equal(result.drained, true);
});

t.test('idle keep-alive sockets are closed at once', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca });
  t.teardown(() => served.server.close(1000)); // idempotent: a no-op after the test's own close
  const connection = new RawConnection(served.port);
  await connection.ready();
  const { head, body } = RawConnection.requestText();
  connection.socket.write(head + body);
  t.equal((await connection.response()).status, 200);
  const started = performance.now();
  const result = await served.server.close(5000);
  await connection.closed;
  t.equal(result.drained, true);
  // The keep-alive timeout is 72 s: anything near it would mean the idle socket was waited out.
  t.ok(performance.now() - started < 5000, 'no wait for the keep-alive timeout');
});

t.test('at the deadline a hanging request is cut and its socket destroyed', async (t) => {
  const entered = gate();
  const served = await serve(
    [
      validating(
        'hang',
        () => {
          entered.open();
          return new Promise<never>(() => undefined);
        },
        { timeoutSeconds: 30 },
      ),
    ],
    { ca },
  );
  t.teardown(() => served.server.close(1000)); // idempotent: a no-op after the test's own close
  const hanging = request(served.port, '/validate/hang?timeout=30s', podReview(), { ca: ca.certPem });
  hanging.catch(() => undefined);
  await entered.opened;
  const started = performance.now();
  const result = await served.server.close(300);
  const elapsed = performance.now() - started;
  t.equal(result.drained, false);
  t.ok(result.destroyedSockets >= 1, `destroyed ${result.destroyedSockets} socket(s)`);
  // The handler hangs for good (its own timeout is 30 s): only the deadline can end the close, and
  // it does not end before it. The bound's slack is for a busy machine.
  t.ok(elapsed >= 250 && elapsed < 300 + EXIT_MARGIN_MS, `closed after ${Math.round(elapsed)} ms for a 300 ms deadline`);
  await t.rejects(hanging, /socket hang up|ECONNRESET/);
});

t.test('a client stuck before the TLS handshake does not hold close past the deadline', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca });
  t.teardown(() => served.server.close(1000)); // idempotent: a no-op after the test's own close
  const { connect } = await import('node:net');
  const raw = connect(served.port, '127.0.0.1');
  raw.on('error', () => undefined);
  await within(EVENT_MS, 'a plain TCP connection', once(raw, 'connect'));
  const result = await served.server.close(200);
  t.equal(result.drained, false);
  t.equal(result.destroyedSockets, 1);
  await within(EVENT_MS, 'the server to close the socket stuck before its handshake', once(raw, 'close'));
});

t.test('close is idempotent', async (t) => {
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca });
  t.teardown(() => served.server.close(1000)); // idempotent: a no-op after the test's own close
  const [a, b] = await Promise.all([served.server.close(1000), served.server.close(1000)]);
  t.equal(a, b);
});
