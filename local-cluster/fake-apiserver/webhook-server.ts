/**
 * A small real HTTPS webhook server for tests of the admission caller: each request is handed to
 * the test's `respond`, which says what to send back (or to hang until the caller gives up).
 */
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { GO_IDLE_CONN_TIMEOUT_MS } from '../admission-caller/go-transport-agent.js';
import { createCertificateAuthority, issueServerCertificate, type CertificateAuthority } from './certs.js';

export interface ReceivedReview {
  path: string;
  headers: IncomingHttpHeaders;
  httpVersion: string;
  alpnProtocol: string | false | null;
  /** Which TLS connection carried it: equal numbers mean a reused connection. */
  connection: number;
  servername: string | false | undefined;
  bodyText: string;
  review: { apiVersion?: string; kind?: string; request?: Record<string, unknown> & { uid: string } };
  startedAt: number;
}

export type WebhookReply =
  | { status?: number; headers?: Record<string, string>; body: unknown }
  | { hang: true }
  | { delayMs: number; then: WebhookReply };

export type Responder = (received: ReceivedReview) => WebhookReply;

export interface TestWebhookServer {
  port: number;
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
  /** base64 of caPem, as clientConfig.caBundle carries it. */
  caBundle: string;
  received: ReceivedReview[];
  respond: Responder;
  close(): Promise<void>;
}

export interface TestWebhookServerOptions {
  /** DNS names in the certificate; default `hook.webhooks.svc` and friends. */
  dnsNames?: string[];
  ipAddresses?: string[];
  ca?: CertificateAuthority;
  respond?: Responder;
}

/** An allowing AdmissionReview v1 response for `received`. */
export function allow(received: ReceivedReview, extra: Record<string, unknown> = {}): WebhookReply {
  return { body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: received.review.request?.uid, allowed: true, ...extra } } };
}

export function deny(received: ReceivedReview, status: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}): WebhookReply {
  return {
    body: {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: received.review.request?.uid, allowed: false, ...(status ? { status } : {}), ...extra },
    },
  };
}

export function jsonPatchResponse(received: ReceivedReview, operations: unknown[]): WebhookReply {
  return allow(received, { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(operations)).toString('base64') });
}

export async function startTestWebhookServer(options: TestWebhookServerOptions = {}): Promise<TestWebhookServer> {
  const ca = options.ca ?? createCertificateAuthority('test-webhook-ca');
  const leaf = issueServerCertificate(ca, {
    commonName: 'hook',
    dnsNames: options.dnsNames ?? ['hook', 'hook.webhooks', 'hook.webhooks.svc', 'hook.webhooks.svc.cluster.local'],
    ipAddresses: options.ipAddresses,
  });
  const sockets = new Set<Socket>();
  const connectionIds = new WeakMap<Socket, number>();
  let nextConnection = 1;
  const timers = new Set<NodeJS.Timeout>();
  const hangs = new Set<ServerResponse>();

  const state: TestWebhookServer = {
    port: 0,
    caPem: ca.certPem,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    received: [],
    respond: options.respond ?? allow,
    close: async () => undefined,
  };

  const send = (res: ServerResponse, reply: WebhookReply): void => {
    if ('hang' in reply) {
      hangs.add(res);
      return;
    }
    if ('delayMs' in reply) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) send(res, reply.then);
      }, reply.delayMs);
      timers.add(timer);
      return;
    }
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    res.writeHead(reply.status ?? 200, { 'Content-Type': 'application/json', ...(reply.headers ?? {}) });
    res.end(text);
  };

  const server: Server = createServer({ cert: leaf.certPem, key: leaf.keyPem, ALPNProtocols: ['h2', 'http/1.1'] }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const socket = req.socket as TLSSocket;
      const bodyText = Buffer.concat(chunks).toString('utf8');
      let review: ReceivedReview['review'] = {};
      try {
        review = JSON.parse(bodyText) as ReceivedReview['review'];
      } catch {
        review = {};
      }
      const received: ReceivedReview = {
        path: req.url ?? '',
        headers: req.headers,
        httpVersion: req.httpVersion,
        alpnProtocol: socket.alpnProtocol,
        connection: connectionIds.get(socket) ?? 0,
        servername: (socket as TLSSocket & { servername?: string | false }).servername,
        bodyText,
        review,
        startedAt: performance.now(),
      };
      state.received.push(received);
      send(res, state.respond(received));
    });
  });
  // A webhook must keep idle connections longer than kube-apiserver does (90 s), or it closes one
  // just as the caller reuses it: node's default of 5 s made a slow test's next call fail with EOF.
  server.keepAliveTimeout = GO_IDLE_CONN_TIMEOUT_MS + 10_000;
  server.on('secureConnection', (socket: TLSSocket) => {
    sockets.add(socket);
    connectionIds.set(socket, nextConnection++);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  state.port = address.port;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      for (const res of hangs) res.destroy();
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  return state;
}
