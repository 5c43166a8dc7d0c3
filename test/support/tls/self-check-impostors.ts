/**
 * Listeners that stand where the server's own webhook port should be and get something wrong, each
 * in one way the self-check must catch: the wrong CA, a certificate without the service name, a
 * non-200 answer, an answer for another review (wrong uid), or no answer at all. Certificates come
 * from test-certs.ts (node:crypto + node-forge), never from src/.
 */
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import type { Cleanups } from '../kube/cluster-harness.js';
import { createTestCa, type TestCa } from './test-certs.js';

export type ImpostorKind = 'wrong-ca' | 'no-service-name' | 'not-200' | 'wrong-uid' | 'silent';

export const IMPOSTOR_KINDS: readonly ImpostorKind[] = ['wrong-ca', 'no-service-name', 'not-200', 'wrong-uid', 'silent'];

/** What the self-check's error must say for each: the reason, not just "it failed". */
export const EXPECTED_REASON: Record<ImpostorKind, RegExp> = {
  'wrong-ca': /self[- ]signed certificate|unable to (get local issuer|verify the first) certificate|certificate signature failure/i,
  'no-service-name': /Hostname\/IP does not match certificate's altnames|ERR_TLS_CERT_ALTNAME_INVALID/,
  'not-200': /HTTP 500/,
  'wrong-uid': /response\.uid is "not-your-review"/,
  silent: /timed? ?out|TimeoutError|aborted/i,
};

export interface Impostor {
  port: number;
  /** Connections the listener accepted: proof the self-check dialled it. */
  connections: number;
}

export interface ImpostorOptions {
  /** 'honest' gets everything right: the control that shows the check can pass. */
  kind: ImpostorKind | 'honest';
  /** The CA the caller trusts (the registered caBundle). */
  trustedCa: TestCa;
  /** `<svc>.<ns>.svc`. */
  serviceHost: string;
}

function listen(server: Server | HttpsServer): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

/** Starts the listener; it is closed (open sockets destroyed) in `t.teardown` whatever the outcome. */
export async function startImpostor(t: Cleanups, options: ImpostorOptions): Promise<Impostor> {
  const impostor: Impostor = { port: 0, connections: 0 };
  const sockets = new Set<Socket>();
  let server: Server | HttpsServer;
  if (options.kind === 'silent') {
    // Accepts the connection and never says a word: no ServerHello, no answer.
    server = createTcpServer((socket) => socket.on('error', () => undefined));
  } else {
    const signer = options.kind === 'wrong-ca' ? createTestCa('someone else CA') : options.trustedCa;
    const hosts = options.kind === 'no-service-name' ? ['other-service.other.svc', '127.0.0.1'] : [options.serviceHost, '127.0.0.1'];
    const leaf = signer.issue({ commonName: hosts[0]!, hosts, usage: 'server' });
    server = createHttpsServer({ key: leaf.keyPem, cert: leaf.certPem }, (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        // Anything but a review (the leader's GET /served-entries): unknown here, as to any program that is not this server.
        if (request.method !== 'POST') {
          response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
          return;
        }
        if (options.kind === 'not-200') {
          response.writeHead(500, { 'content-type': 'text/plain' }).end('the sidecar is not ready');
          return;
        }
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string; kind: string; request: { uid: string } };
        const uid = options.kind === 'wrong-uid' ? 'not-your-review' : review.request.uid;
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: review.apiVersion, kind: review.kind, response: { uid, allowed: true } }));
      });
    });
  }
  server.on('connection', (socket: Socket) => {
    impostor.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  impostor.port = await listen(server);
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return impostor;
}
