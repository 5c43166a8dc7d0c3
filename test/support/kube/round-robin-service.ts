/**
 * A Service in front of several replicas, as kube-apiserver's pooled connections meet it: each new
 * connection of a pool goes to the next replica in turn, the first to the first listed (kube-proxy
 * picks at random; in turn makes the test's path through the replicas certain), and a kept-alive
 * connection stays on the replica it reached. So a retry after an answer that closed its
 * connection (`Connection: close`) reaches another replica.
 */
import type { NetConnectOpts } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ConnectionOptions } from 'node:tls';
import { GoTransportAgent } from '../../../local-cluster/admission-caller/go-transport-agent.js';

export class RoundRobinService {
  /** The port each new connection went to, in order. */
  readonly connections: number[] = [];

  constructor(private readonly ports: () => readonly number[]) {}

  /** The port of a pool's `index`th new connection: each pool starts at the first endpoint. */
  pick(index: number): number {
    const ports = this.ports();
    const port = ports[index % Math.max(1, ports.length)];
    if (port === undefined) throw new Error('the Service has no endpoint');
    this.connections.push(port);
    return port;
  }

  /** A kube-apiserver connection pool whose new connections go through this Service. */
  agent(): GoTransportAgent {
    return new ServiceAgent(this);
  }
}

class ServiceAgent extends GoTransportAgent {
  #opened = 0;

  constructor(private readonly service: RoundRobinService) {
    super();
  }

  override createConnection(options: NetConnectOpts & ConnectionOptions, callback?: (error: Error | null, socket: Duplex) => void): Duplex | null | undefined {
    return super.createConnection({ ...options, host: '127.0.0.1', port: this.service.pick(this.#opened++) }, callback);
  }
}
