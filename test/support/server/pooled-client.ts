/**
 * A client that uses its connections the way kube-apiserver's Go transport does behind a
 * ClusterIP Service: one pool of keep-alive connections for the Service's address, the most
 * recently used idle connection reused first, a new connection opened only when none is idle,
 * a connection the server answered with `Connection: close` (or closed) dropped from the pool.
 * Each new connection goes to one of the endpoints live at that moment (kube-proxy picks per
 * connection); connections already open stay with their endpoint. The pool is kube-apiserver's
 * (GoTransportAgent: idle connections closed by the client after 90 s).
 */
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { GoTransportAgent } from '../../../local-cluster/admission-caller/go-transport-agent.js';

export class ServiceAddressAgent extends GoTransportAgent {
  readonly #endpoints: () => readonly number[];
  #next = 0;

  /** `endpoints()` is asked at every new connection: the ports of the replicas in the Service right now. */
  constructor(endpoints: () => readonly number[], options: https.AgentOptions) {
    super(options);
    this.#endpoints = endpoints;
  }

  override createConnection(options: https.RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const live = this.#endpoints();
    const port = live[this.#next++ % Math.max(1, live.length)];
    if (port === undefined) throw new Error('the Service has no endpoint');
    return super.createConnection({ ...options, port }, callback);
  }
}

export interface PooledCall {
  /** performance.now() when the request was started. */
  sentAt: number;
  /** The endpoint port that answered (or whose connection failed). */
  port: number | undefined;
  reusedConnection: boolean;
  status?: number;
  /** The `Connection` header of the answer. */
  connection?: string;
  error?: string;
}

export interface PooledLoadOptions {
  agent: ServiceAddressAgent;
  /** Concurrent callers sharing the pool. */
  workers: number;
  path: string;
  body: string;
  serverName: string;
  caPem: string;
  /** Per-request deadline. */
  timeoutMs: number;
}

function callOnce(options: PooledLoadOptions): Promise<PooledCall> {
  const sentAt = performance.now();
  return new Promise((resolve) => {
    let port: number | undefined;
    const req = https.request(
      {
        agent: options.agent,
        host: '127.0.0.1',
        // The Service's address: the pool key. The agent connects to an endpoint instead.
        port: 443,
        path: options.path,
        method: 'POST',
        servername: options.serverName,
        ca: options.caPem,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(options.body)), host: `${options.serverName}:443` },
        timeout: options.timeoutMs,
      },
      (res) => {
        port = (res.socket as TLSSocket).remotePort;
        res.resume();
        res.on('end', () =>
          resolve({ sentAt, port, reusedConnection: req.reusedSocket, status: res.statusCode ?? 0, connection: String(res.headers.connection ?? '') }),
        );
        res.on('error', (error) => resolve({ sentAt, port, reusedConnection: req.reusedSocket, error: error.message }));
      },
    );
    req.on('socket', (socket) => {
      port = (socket as TLSSocket).remotePort ?? port;
      if (port === undefined) socket.once('connect', () => (port = (socket as TLSSocket).remotePort));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ sentAt, port, reusedConnection: req.reusedSocket, error: `${error.code ?? ''} ${error.message}`.trim() }));
    req.end(options.body);
  });
}

/** Runs `workers` callers back to back over the shared pool until `stop` aborts; resolves with every call. */
export async function runPooledLoad(options: PooledLoadOptions, stop: AbortSignal): Promise<PooledCall[]> {
  const calls: PooledCall[] = [];
  const worker = async (): Promise<void> => {
    while (!stop.aborted) calls.push(await callOnce(options));
  };
  await Promise.all(Array.from({ length: options.workers }, worker));
  return calls;
}
