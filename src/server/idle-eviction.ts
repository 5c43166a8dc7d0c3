import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';

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
