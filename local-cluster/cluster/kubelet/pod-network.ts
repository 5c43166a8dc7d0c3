/**
 * Pod IPs without network namespaces: every Pod gets its own loopback address from a /24 in
 * 127.0.0.0/8 chosen at random per cluster (Linux routes all of it to lo), so two replicas can
 * both listen on their containerPorts (8443, 8080) as in a cluster. An address whose ports are
 * taken (another process bound them, or 0.0.0.0) is skipped, up to a limit with a clear error.
 */
import { createServer } from 'node:net';
import { randomInt } from 'node:crypto';

const MAX_ATTEMPTS = 16;

function canBind(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: ip, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export class PodNetwork {
  readonly prefix: string;
  readonly #inUse = new Set<string>();
  #next = 2;

  constructor(prefix?: string) {
    // 127.0.x.x is left alone (127.0.0.1 is everybody's); the second and third octets are random.
    this.prefix = prefix ?? `127.${randomInt(1, 255)}.${randomInt(0, 256)}.`;
  }

  /** A free address on which every port in `ports` can be bound. */
  async allocate(ports: readonly number[]): Promise<string> {
    const refused: string[] = [];
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const ip = this.nextAddress();
      const taken: number[] = [];
      for (const port of ports) if (port > 0 && !(await canBind(ip, port))) taken.push(port);
      if (taken.length === 0) {
        this.#inUse.add(ip);
        return ip;
      }
      refused.push(`${ip} (port ${taken.join(', ')} taken)`);
    }
    throw new Error(`no pod address with free ports ${ports.join(', ')}: tried ${refused.join('; ')}; is something listening on 0.0.0.0 on those ports?`);
  }

  release(ip: string): void {
    this.#inUse.delete(ip);
  }

  private nextAddress(): string {
    for (let i = 0; i < 253; i++) {
      const candidate = `${this.prefix}${this.#next}`;
      this.#next = this.#next >= 254 ? 2 : this.#next + 1;
      if (!this.#inUse.has(candidate)) return candidate;
    }
    throw new Error(`the pod network ${this.prefix}0/24 is full`);
  }
}
