import { once } from 'node:events';
import tls from 'node:tls';
import { EVENT_MS, within } from '../deadline.js';
import { podReview, TEST_SERVER_NAME } from './server-harness.js';

/** A hand-driven keep-alive connection: write raw HTTP/1.1, read whole responses. */
export class RawConnection {
  readonly socket: tls.TLSSocket;
  #buffer = '';
  #waiters: (() => void)[] = [];
  readonly #closed: Promise<void>;

  constructor(port: number, caPem: string) {
    this.socket = tls.connect({ host: '127.0.0.1', port, servername: TEST_SERVER_NAME, ca: caPem });
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
