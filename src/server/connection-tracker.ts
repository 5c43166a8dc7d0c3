import type { Server } from 'node:net';
import type { Socket } from 'node:net';

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
