/**
 * The webhook listener's connections: the limits each client is held to, the answer to a client
 * that breaks them, which sockets are open and which sit idle between requests (closed at the
 * connection cap and at the close), all on node's server below fastify.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer, ServerOptions as HttpsServerOptions } from 'node:https';
import type { Server, Socket } from 'node:net';
import type { Logger } from 'pino';
import { SECURITY_HEADERS } from './security-headers.js';

/**
 * How long and how much a client may take, connection by connection. fastify 5 and node leave
 * most of these unlimited or loose (fastify: requestTimeout 0 = none, connectionTimeout 0 = none;
 * node: headersTimeout 60 s checked every 30 s, maxHeaderSize 16 KiB, maxConnections unlimited),
 * so every one is set explicitly here.
 */
export interface ConnectionLimits {
  /** A TLS handshake not finished within this is dropped (node's handshakeTimeout, default 120 s). */
  handshakeTimeoutMs: number;
  /** From the connection (or a new request on a kept-alive one) to the end of the request headers. */
  headersTimeoutMs: number;
  /** From the start of a request to the last byte of its body; the handler's own time is not counted. */
  requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /**
   * While a request is in flight, no byte in either direction for this long closes the socket
   * (a stalled handler or a client that stops reading the answer): it must stay above the
   * longest webhook timeout (30 s). Checked every quarter of it (IdleSocketTracker.closeStalled),
   * so a stalled socket goes between 1x and 1.5x this after its last byte.
   */
  socketIdleTimeoutMs: number;
  /** How often node looks for requests past headersTimeout/requestTimeout: the precision of both. */
  timeoutCheckIntervalMs: number;
  /** Request line plus headers; larger is answered 431. */
  maxHeaderBytes: number;
  /** Open TCP connections (handshakes included); past it new ones are closed at once and long-idle kept-alive ones are closed to make room. */
  maxConnections: number;
  /**
   * At the cap and at the close, connections idle at least this long are closed; busier ones are
   * spared (at the close, until they have been idle this long).
   */
  evictIdleAfterMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: Readonly<ConnectionLimits> = Object.freeze({
  handshakeTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  // Longer than kube-apiserver keeps an idle webhook connection (Go's IdleConnTimeout, 90 s), so
  // the caller always closes first: a server that closes first can drop a connection just as
  // kube-apiserver reuses it, and that call fails with EOF (a POST is not retried).
  keepAliveTimeoutMs: 100_000,
  socketIdleTimeoutMs: 60_000,
  timeoutCheckIntervalMs: 1_000,
  maxHeaderBytes: 16 * 1024,
  maxConnections: 1_000,
  evictIdleAfterMs: 1_000,
});

/** Fills in the defaults and refuses combinations node would reject or that make no sense. */
export function resolveConnectionLimits(overrides: Partial<ConnectionLimits> = {}): ConnectionLimits {
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value <= 0) throw new RangeError(`connection limit ${name} must be a positive integer, got ${value}`);
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new RangeError(`headersTimeoutMs (${limits.headersTimeoutMs}) must not exceed requestTimeoutMs (${limits.requestTimeoutMs})`);
  }
  return limits;
}

/** The node:https options that carry the limits (read once, when the server is created). */
export function httpsLimitOptions(limits: ConnectionLimits): HttpsServerOptions {
  return {
    handshakeTimeout: limits.handshakeTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
    maxHeaderSize: limits.maxHeaderBytes,
  };
}

/**
 * The limits node reads from the server object rather than its options. Not its per-socket
 * inactivity timer (server.setTimeout): it is re-armed on every read and write, a cost on every
 * review; socketIdleTimeoutMs is enforced by a sweep instead (webhook-server.ts).
 */
export function applyServerLimits(server: HttpsServer, limits: ConnectionLimits): void {
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
}

/**
 * Caps open connections. When the cap drops a new connection, kept-alive connections idle for
 * evictIdleAfterMs are closed, so a flood of idle sockets cannot keep callers out for the whole
 * keep-alive timeout: the caller's next attempt finds room. Requests in flight, and connections
 * that were busy a moment ago, are never touched.
 */
export function capConnections(server: HttpsServer, limits: ConnectionLimits, idle: IdleSocketTracker, logger: Logger): void {
  server.maxConnections = limits.maxConnections;
  let lastWarning = 0;
  let closedSinceWarning = 0;
  server.on('drop', () => {
    closedSinceWarning += idle.closeIdleFor(limits.evictIdleAfterMs);
    const now = performance.now();
    // One line per second at most: the flood itself must not flood the log.
    if (now - lastWarning < 1_000) return;
    logger.warn({ maxConnections: limits.maxConnections, idleClosed: closedSinceWarning }, 'connection limit reached: new connection dropped, idle kept-alive connections closed');
    lastWarning = now;
    closedSinceWarning = 0;
  });
}

/** How long a client has to read a 4xx sent before the socket is closed. */
const CLOSE_GRACE_MS = 1_000;

/** Ends the socket after the write side is finished; destroys it past CLOSE_GRACE_MS whatever the client does. */
function closeWithGrace(socket: Socket, lastBytes?: string): void {
  const cutOff = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  socket.once('close', () => clearTimeout(cutOff));
  if (lastBytes === undefined) socket.end();
  else socket.end(lastBytes);
}

/**
 * For an answer sent before the request body was read (a 413): closing at once while the client
 * is still sending resets the connection, and the client may lose the answer; reading the rest
 * takes as long as the client likes. So the answer goes out, then a FIN, what still arrives is
 * discarded, and the socket is closed when the client closes or after CLOSE_GRACE_MS.
 */
export function closeAfterAnswer(request: IncomingMessage, response: ServerResponse): void {
  response.once('finish', () => {
    if (request.socket.destroyed) return;
    request.resume();
    closeWithGrace(request.socket);
  });
}

interface ClientErrorReply {
  statusCode: number;
  status: string;
  message: string;
}

/** The answer to an HTTP-level client error, or undefined for TLS and socket errors (nothing HTTP to answer). */
function clientErrorReply(code: string | undefined, limits: ConnectionLimits): ClientErrorReply | undefined {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      statusCode: 408,
      status: 'Request Timeout',
      message: `request not received in time: headers are due within ${limits.headersTimeoutMs} ms, the whole request within ${limits.requestTimeoutMs} ms`,
    };
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { statusCode: 431, status: 'Request Header Fields Too Large', message: `request headers are larger than the ${limits.maxHeaderBytes} byte limit` };
  }
  // The client ended its side mid-request: there is nobody to answer.
  if (code === 'HPE_INVALID_EOF_STATE') return undefined;
  if (code?.startsWith('HPE_')) return { statusCode: 400, status: 'Bad Request', message: `malformed HTTP request (${code})` };
  return undefined;
}

function rawResponse(reply: ClientErrorReply): string {
  const body = JSON.stringify({ error: reply.message });
  const headers = { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), connection: 'close' };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `HTTP/1.1 ${reply.statusCode} ${reply.status}\r\n${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * fastify's clientErrorHandler: errors before a request reaches the app (timeouts, oversized or
 * malformed headers) get a 4xx saying what was wrong, then the socket is closed. TLS errors
 * (handshake timeout, bad handshake) come here too and are only closed: the peer speaks no HTTP yet.
 */
export function clientErrorHandler(limits: ConnectionLimits, logger: Logger): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    const reply = clientErrorReply(error.code, limits);
    if (!reply || !socket.writable) {
      socket.destroy();
      return;
    }
    logger.warn({ statusCode: reply.statusCode, error: reply.message }, 'bad client connection');
    // end() rather than destroy(): closing with unread input resets the connection and the client
    // could lose the answer. A client that neither reads it nor closes is cut off after a grace
    // period that its own traffic cannot extend.
    closeWithGrace(socket, rawResponse(reply));
  };
}

interface SocketUse {
  inFlight: number;
  /** performance.now() since when no request is in flight on it; undefined while one is. */
  idleSince: number | undefined;
  /** bytesRead + bytesWritten when closeStalled() last saw them move; -1 after a new request. */
  bytes: number;
  /** performance.now() when closeStalled() last saw bytes move (or the request began). */
  movedAt: number;
}

/**
 * Knows which connections sit between requests and since when (a connection that has not sent
 * its first request yet counts as idle from its handshake: Go's transport parks spare
 * connections in its pool unused), so that the long-idle ones can be closed at the connection
 * cap and at the close. Unlike node's closeIdleConnections it spares a connection that was busy a
 * moment ago: closing a caller's pooled connection just as it sends its next request fails that
 * request.
 */
export class IdleSocketTracker {
  readonly #uses = new Map<Socket, SocketUse>();

  constructor(server: HttpsServer) {
    server.on('secureConnection', (socket: Socket) => this.#track(socket));
    server.on('request', (request, response) => {
      const use = this.#uses.get(request.socket) ?? this.#track(request.socket);
      use.inFlight += 1;
      use.idleSince = undefined;
      use.bytes = -1;
      // 'close' follows 'finish' and also comes when the request is aborted: counted once either way.
      response.once('close', () => {
        use.inFlight -= 1;
        if (use.inFlight === 0) use.idleSince = performance.now();
      });
    });
  }

  #track(socket: Socket): SocketUse {
    const use: SocketUse = { inFlight: 0, idleSince: performance.now(), bytes: -1, movedAt: 0 };
    this.#uses.set(socket, use);
    socket.once('close', () => this.#uses.delete(socket));
    return use;
  }

  /** Destroys every connection idle for at least `minIdleMs`; returns how many. */
  closeIdleFor(minIdleMs: number): number {
    const cutOff = performance.now() - minIdleMs;
    let closed = 0;
    for (const [socket, use] of this.#uses) {
      if (use.idleSince !== undefined && use.idleSince <= cutOff) {
        socket.destroy();
        this.#uses.delete(socket);
        closed += 1;
      }
    }
    return closed;
  }

  /**
   * Destroys every connection with a request in flight on which no byte moved either way for at
   * least `timeoutMs` (a handler or a client that stalls mid-answer); returns how many. Called on
   * a timer, it replaces node's per-socket inactivity timeout, whose timer every read and write
   * re-armed (a cost on every review): this reads each socket's byte counters once per call.
   * Between requests the keep-alive timeout applies, before the first one the headers timeout.
   */
  closeStalled(timeoutMs: number): number {
    const now = performance.now();
    let closed = 0;
    for (const [socket, use] of this.#uses) {
      if (use.inFlight === 0) continue;
      const bytes = socket.bytesRead + socket.bytesWritten;
      if (bytes !== use.bytes) {
        use.bytes = bytes;
        use.movedAt = now;
      } else if (now - use.movedAt >= timeoutMs) {
        socket.destroy();
        this.#uses.delete(socket);
        closed += 1;
      }
    }
    return closed;
  }
}

/**
 * Every TCP socket the server accepted and that is still open, including ones still in the TLS
 * handshake (which node's closeAllConnections does not know about): at the close deadline they
 * are all destroyed, so close never waits on a client.
 */
export class ConnectionTracker {
  readonly #sockets = new Set<Socket>();

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  get size(): number {
    return this.#sockets.size;
  }

  /** Destroys every open socket; returns how many there were. */
  destroyAll(): number {
    const count = this.#sockets.size;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    return count;
  }
}
