/**
 * Clients that misbehave at the connection level, each over a real socket: they dribble headers or
 * a body, send too much, never finish the TLS handshake, idle, or reset mid-request. Shared by
 * test/server-hostile-clients.test.ts and the larger run in bench/hostile.ts.
 */
import { once } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';

export interface Target {
  port: number;
  /** CA that signed the serving certificate. */
  caPem: string;
  serverName: string;
}

/** How a hostile connection ended. */
export interface HostileOutcome {
  /** HTTP status of the last answer the server sent, when it sent one. */
  status: number | undefined;
  /** The `error` field of that answer's JSON body. */
  reason: string | undefined;
  /** From the first byte the attack sent to the connection's close. */
  closedAfterMs: number;
}

export interface Attack {
  /** Resolves once the attack is under way (its first bytes are on the wire). */
  engaged: Promise<void>;
  /** Resolves when the server ended the connection; rejects when it did not within the deadline. */
  outcome: Promise<HostileOutcome>;
}

const REQUEST_PATH = '/validate/allow?timeout=5s';

/** Status and `error` of the last response in `raw` (the earlier ones were answers to earlier requests). */
function lastAnswer(raw: string): Pick<HostileOutcome, 'status' | 'reason'> {
  const start = raw.lastIndexOf('HTTP/1.1 ');
  if (start < 0) return { status: undefined, reason: undefined };
  const response = raw.slice(start);
  const status = Number(response.slice(9, 12));
  const body = response.slice(response.indexOf('\r\n\r\n') + 4);
  try {
    const reason = (JSON.parse(body) as { error?: unknown }).error;
    return { status, reason: typeof reason === 'string' ? reason : undefined };
  } catch {
    return { status, reason: undefined };
  }
}

/** A TLS connection whose every received byte is kept; `closed` settles when the socket closes or at the deadline. */
class RawTlsConnection {
  readonly tcp: net.Socket;
  readonly socket: tls.TLSSocket;
  readonly secure: Promise<void>;
  received = '';
  #startedAt = performance.now();

  constructor(target: Target, session?: Buffer) {
    this.tcp = net.connect(target.port, '127.0.0.1');
    this.socket = tls.connect({ socket: this.tcp, servername: target.serverName, ca: target.caPem, ...(session ? { session } : {}) });
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => (this.received += chunk));
    this.socket.on('error', () => undefined);
    this.tcp.on('error', () => undefined);
    // Settles either way: a connection dropped at the server's cap may close without an error.
    this.secure = new Promise((resolve, reject) => {
      this.socket.once('secureConnect', () => resolve());
      this.socket.once('close', () => reject(new Error('closed before the TLS handshake finished')));
    });
  }

  /** Writes unless the socket is closed; false when it is closed or its buffer is full. */
  write(data: string | Buffer): boolean {
    if (!this.socket.writable) return false;
    return this.socket.write(data);
  }

  /** Marks the start of the attack: closedAfterMs counts from here. */
  markStart(): void {
    this.#startedAt = performance.now();
  }

  /** Waits for the socket to close; past `deadlineMs` destroys it and rejects. */
  closed(deadlineMs: number, what: string): Promise<HostileOutcome> {
    return untilClosed(this.socket, deadlineMs, what).then(() => ({
      ...lastAnswer(this.received),
      closedAfterMs: Math.round(performance.now() - this.#startedAt),
    }));
  }

  destroy(): void {
    this.socket.destroy();
    this.tcp.destroy();
  }
}

/** Resolves when `socket` closes; destroys it and rejects when that takes longer than `deadlineMs`. */
function untilClosed(socket: net.Socket, deadlineMs: number, what: string): Promise<void> {
  if (socket.destroyed && socket.closed) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${what}: the server kept the connection open past ${deadlineMs} ms`));
    }, deadlineMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Writes `next()` every `intervalMs` until the socket closes. */
function dribble(connection: RawTlsConnection, intervalMs: number, next: () => string): void {
  const timer = setInterval(() => {
    if (!connection.write(next())) clearInterval(timer);
  }, intervalMs);
  connection.socket.once('close', () => clearInterval(timer));
}

function requestHead(target: Target, extraHeaders: string, path = REQUEST_PATH): string {
  return `POST ${path} HTTP/1.1\r\nHost: ${target.serverName}\r\nContent-Type: application/json\r\n${extraHeaders}`;
}

/** Starts a TLS connection, then `begin` once it is secure; the outcome is the server closing it. */
function tlsAttack(target: Target, deadlineMs: number, what: string, begin: (connection: RawTlsConnection) => void): Attack {
  const connection = new RawTlsConnection(target);
  const engaged = connection.secure.then(() => {
    connection.markStart();
    begin(connection);
  });
  const outcome = engaged.then(
    () => connection.closed(deadlineMs, what),
    (error: unknown) => {
      connection.destroy();
      throw error;
    },
  );
  return { engaged, outcome };
}

/** Slowloris: a request whose headers arrive one byte at a time and never end. */
export function slowHeaders(target: Target, options: { intervalMs: number; deadlineMs: number }): Attack {
  return tlsAttack(target, options.deadlineMs, 'slow headers', (connection) => {
    connection.write(requestHead(target, 'X-Slow: '));
    dribble(connection, options.intervalMs, () => 'a');
  });
}

/** Complete headers announcing a body that then arrives one byte at a time. */
export function slowBody(target: Target, options: { intervalMs: number; deadlineMs: number }): Attack {
  return tlsAttack(target, options.deadlineMs, 'slow body', (connection) => {
    connection.write(requestHead(target, 'Content-Length: 100000\r\n\r\n{'));
    dribble(connection, options.intervalMs, () => ' ');
  });
}

/** Connects, finishes the TLS handshake, and never sends a byte. */
export function silentAfterHandshake(target: Target, options: { deadlineMs: number }): Attack {
  return tlsAttack(target, options.deadlineMs, 'silent after the handshake', () => undefined);
}

/** One header larger than `bytes`. */
export function oversizedHeaders(target: Target, options: { bytes: number; deadlineMs: number }): Attack {
  return tlsAttack(target, options.deadlineMs, 'oversized headers', (connection) => {
    connection.write(requestHead(target, `X-Big: ${'a'.repeat(options.bytes)}\r\nContent-Length: 2\r\n\r\n{}`));
  });
}

/** A Content-Length far past the body limit; a first piece of the body, then nothing. */
export function hugeContentLength(target: Target, options: { deadlineMs: number }): Attack {
  return tlsAttack(target, options.deadlineMs, 'huge Content-Length', (connection) => {
    connection.write(requestHead(target, `Content-Length: ${10 * 1024 ** 3}\r\n\r\n{"apiVersion":`));
  });
}

/** A chunked body written as fast as the server takes it, growing past `limitBytes`. */
export function chunkedFlood(target: Target, options: { limitBytes: number; deadlineMs: number }): Attack {
  return tlsAttack(target, options.deadlineMs, 'chunked flood', (connection) => {
    connection.write(requestHead(target, 'Transfer-Encoding: chunked\r\n\r\n'));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    let sent = 0;
    // Twice the limit at most: past that the server has plainly failed to stop it.
    const pump = (): void => {
      while (sent < 2 * options.limitBytes) {
        sent += chunk.length;
        if (!connection.write(framed)) {
          connection.socket.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}

/** Headers and half the body, then a TCP reset. The outcome is the client's own close. */
export function resetMidRequest(target: Target, options: { deadlineMs: number }): Attack {
  return tlsAttack(target, options.deadlineMs, 'reset mid-request', (connection) => {
    connection.write(requestHead(target, 'Content-Length: 1000\r\n\r\n{"apiVersion":"admission.k8s.io/v1",'));
    // After the bytes are handed to the kernel, so the server has a request in progress.
    setImmediate(() => connection.tcp.resetAndDestroy());
  });
}

/** TCP connection and the first bytes of a TLS ClientHello, then silence: the handshake never finishes. */
export function abandonedHandshake(target: Target, options: { deadlineMs: number }): Attack {
  const tcp = net.connect(target.port, '127.0.0.1');
  tcp.on('error', () => undefined);
  let startedAt = 0;
  const engaged = once(tcp, 'connect').then(() => {
    startedAt = performance.now();
    // Record header (handshake, TLS 1.0 record version, 512 bytes announced) and the start of a ClientHello.
    tcp.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
  });
  const outcome = engaged.then(async () => {
    await untilClosed(tcp, options.deadlineMs, 'abandoned handshake');
    return { status: undefined, reason: undefined, closedAfterMs: Math.round(performance.now() - startedAt) };
  });
  return { engaged, outcome };
}

/** Idle kept-alive connections: each sends one request, reads its answer and then just stays open. */
export class IdleConnections {
  readonly #connections: RawTlsConnection[] = [];
  /** A TLS session to resume: a flood of resumed handshakes costs the client (and server) little CPU. */
  #session: Buffer | undefined;

  /** Connections the server refused or closed before they became idle (at its connection cap). */
  refused = 0;

  /** Opens `count` connections, `parallel` at a time; resolves when each is idle or was refused. */
  async open(target: Target, count: number, parallel = 50): Promise<void> {
    const request = `GET /idle HTTP/1.1\r\nHost: ${target.serverName}\r\n\r\n`;
    const openOne = async (): Promise<void> => {
      const connection = new RawTlsConnection(target, this.#session);
      connection.socket.once('session', (session: Buffer) => (this.#session ??= session));
      try {
        await connection.secure;
        connection.write(request);
        while (!connection.received.includes('\r\n\r\n')) {
          if (connection.socket.readableEnded || connection.socket.destroyed) throw new Error('closed before the answer');
          await Promise.race([once(connection.socket, 'data'), once(connection.socket, 'close')]);
        }
        this.#connections.push(connection);
      } catch {
        this.refused += 1;
        connection.destroy();
      }
    };
    // The first one alone: the rest resume its TLS session.
    let next = 1;
    await openOne();
    const worker = async (): Promise<void> => {
      while (next < count) {
        next += 1;
        await openOne();
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  }

  /** How many the server has closed so far. */
  closedByServer(): number {
    return this.#connections.filter((connection) => connection.socket.readableEnded || connection.socket.destroyed).length;
  }

  get size(): number {
    return this.#connections.length;
  }

  /** Closes them all from the client side and waits until every socket is closed. */
  async close(deadlineMs: number): Promise<void> {
    await Promise.all(
      this.#connections.map((connection) => {
        connection.destroy();
        return untilClosed(connection.socket, deadlineMs, 'idle connection');
      }),
    );
    this.#connections.length = 0;
  }

  /** Waits until the server has closed every one of them. */
  async closedByServerWithin(deadlineMs: number): Promise<void> {
    await Promise.all(this.#connections.map((connection) => untilClosed(connection.socket, deadlineMs, 'idle connection')));
  }
}

/** The limits the catalogue below attacks (a subset of the server's ConnectionLimits). */
export interface AttackedLimits {
  handshakeTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  timeoutCheckIntervalMs: number;
  maxHeaderBytes: number;
  bodyLimitBytes: number;
}

/** One kind of hostile client and what the server must do to it. */
export interface HostileKind {
  name: string;
  start(target: Target): Attack;
  /** The server must end the connection within this... */
  deadlineMs: number;
  /** ...and not before this: the limit that should cut it, less the clocks' offset. */
  notBeforeMs: number;
  /** The answer the server must send first, or undefined for a close without one. */
  expected: { status: number; reason: RegExp } | undefined;
}

/** Every hostile kind, with deadlines derived from `limits` plus `slackMs` for a noisy machine. */
export function hostileKinds(limits: AttackedLimits, slackMs: number): HostileKind[] {
  const cutAt = (limitMs: number): Pick<HostileKind, 'deadlineMs' | 'notBeforeMs'> => ({
    deadlineMs: limitMs + limits.timeoutCheckIntervalMs + slackMs,
    notBeforeMs: Math.round(limitMs * 0.9),
  });
  const immediate = { deadlineMs: slackMs, notBeforeMs: 0 };
  // A byte twenty times per headers timeout: never silent long enough to look idle.
  const intervalMs = Math.max(20, Math.round(limits.headersTimeoutMs / 20));
  const timedOut = { status: 408, reason: /not received in time/ };
  const tooLarge = { status: 413, reason: new RegExp(`larger than the ${limits.bodyLimitBytes / 1024 ** 2} MiB limit`) };
  return [
    { name: 'slow headers (slowloris)', start: (t) => slowHeaders(t, { intervalMs, ...cutAt(limits.headersTimeoutMs) }), ...cutAt(limits.headersTimeoutMs), expected: timedOut },
    // The headers are complete: the request timeout cuts it, not the headers timeout.
    { name: 'slow body', start: (t) => slowBody(t, { intervalMs, ...cutAt(limits.requestTimeoutMs) }), ...cutAt(limits.requestTimeoutMs), expected: timedOut },
    { name: 'silent after the TLS handshake', start: (t) => silentAfterHandshake(t, cutAt(limits.headersTimeoutMs)), ...cutAt(limits.headersTimeoutMs), expected: timedOut },
    {
      name: `oversized headers (2x the ${limits.maxHeaderBytes} byte limit)`,
      start: (t) => oversizedHeaders(t, { bytes: 2 * limits.maxHeaderBytes, ...immediate }),
      ...immediate,
      expected: { status: 431, reason: new RegExp(`larger than the ${limits.maxHeaderBytes} byte limit`) },
    },
    { name: 'a body declared 10 GiB by Content-Length', start: (t) => hugeContentLength(t, immediate), ...immediate, expected: tooLarge },
    { name: 'a chunked body growing past the body limit', start: (t) => chunkedFlood(t, { limitBytes: limits.bodyLimitBytes, ...immediate }), ...immediate, expected: tooLarge },
    { name: 'a TCP reset in the middle of a request', start: (t) => resetMidRequest(t, immediate), ...immediate, expected: undefined },
    { name: 'a TLS handshake that never finishes', start: (t) => abandonedHandshake(t, cutAt(limits.handshakeTimeoutMs)), ...cutAt(limits.handshakeTimeoutMs), expected: undefined },
  ];
}

/** Undefined when `outcome` is what `kind` expects; else what differs. */
export function judge(kind: HostileKind, outcome: HostileOutcome): string | undefined {
  const { closedAfterMs, status, reason } = outcome;
  if (closedAfterMs < kind.notBeforeMs || closedAfterMs > kind.deadlineMs) {
    return `closed after ${closedAfterMs} ms, expected ${kind.notBeforeMs}..${kind.deadlineMs} ms`;
  }
  if (kind.expected === undefined) return status === undefined ? undefined : `answered ${status}, expected a close without an answer`;
  if (status !== kind.expected.status) return `answered ${status ?? 'nothing'}, expected ${kind.expected.status}`;
  return reason !== undefined && kind.expected.reason.test(reason) ? undefined : `reason ${JSON.stringify(reason)} does not match ${kind.expected.reason}`;
}

/** One line on what happened: for reports and test messages. */
export function describeOutcome(outcome: HostileOutcome): string {
  const answer = outcome.status === undefined ? 'closed without an answer' : `answered ${outcome.status} (${outcome.reason ?? 'no reason'})`;
  return `${answer} after ${outcome.closedAfterMs} ms`;
}
