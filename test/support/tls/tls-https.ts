/** A real node:https server and client for observing which certificate is served. */
import { createServer, request, type Agent, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

export interface TestHttpsServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export async function startHttpsServer(material: { certPem: string; keyPem: string }): Promise<TestHttpsServer> {
  const server = createServer({ key: material.keyPem, cert: material.certPem, minVersion: 'TLSv1.2' }, (req, res) => {
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Fetched {
  status: number;
  body: string;
  /** SHA-256 fingerprint of the certificate the server presented (empty on a reused socket: Node frees it). */
  fingerprint: string;
  reusedSocket: boolean;
  socket: TLSSocket;
}

/** GET / with full verification against `ca` and `servername`; rejects on any TLS failure. */
export function fetchOnce(options: { port: number; ca: string; servername: string; agent?: Agent | false; timeoutMs?: number }): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: options.port,
        path: '/',
        ca: options.ca,
        servername: options.servername,
        agent: options.agent ?? false,
        signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), fingerprint, reusedSocket: req.reusedSocket, socket }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Polls `probe` until it returns true; rejects after `timeoutMs`. */
export async function eventually(probe: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
