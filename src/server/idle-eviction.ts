import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';

interface SocketUse {
  inFlight: number;
  /** performance.now() when the last request on it finished; undefined while one is in flight. */
  idleSince: number | undefined;
}

/**
 * Knows which kept-alive connections sit between requests and since when, so that at the
 * connection cap the long-idle ones can be closed. Unlike node's closeIdleConnections it spares
 * a connection that was busy a moment ago: closing a caller's pooled connection just as it sends
 * its next request fails that request.
 */
export class IdleSocketTracker {
  readonly #uses = new Map<Socket, SocketUse>();

  constructor(server: HttpsServer) {
    server.on('request', (request, response) => {
      const socket = request.socket;
      let use = this.#uses.get(socket);
      if (!use) {
        this.#uses.set(socket, (use = { inFlight: 0, idleSince: undefined }));
        socket.once('close', () => this.#uses.delete(socket));
      }
      const current = use;
      current.inFlight += 1;
      current.idleSince = undefined;
      // 'close' follows 'finish' and also comes when the request is aborted: counted once either way.
      response.once('close', () => {
        current.inFlight -= 1;
        if (current.inFlight === 0) current.idleSince = performance.now();
      });
    });
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
}
