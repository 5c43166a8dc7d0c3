/**
 * One server under test, in its own process so its RSS is its own. Started by bench/admission.ts
 * and bench/hostile.ts with fork(); receives { mode, certPem, keyPem } and answers { port }. Then
 * { type: 'stats' } is answered with memory after a full GC (when run with --expose-gc) and the
 * webhook server's open connections.
 */
import https from 'node:https';
import { createLogger, fixedFieldsLogger } from '../src/lifecycle/logger.js';
import { Registry } from 'prom-client';
import { WebhookRegistry } from '../src/webhooks/registry.js';
import { serverTlsOptions } from '../src/server/tls-options.js';
import type { ConnectionLimits } from '../src/server/connections.js';
import { createWebhookServer, type WebhookServer } from '../src/server/webhook-server.js';
import { benchWebhooks } from './webhooks.js';

/**
 * raw: a fixed allow without reading the body into a string; reference: the least any webhook
 * does (read the body, JSON.parse it, answer an allow echoing the review's uid), the yardstick of
 * the admission targets; fastify: the webhook server.
 */
export type TargetMode = 'raw' | 'reference' | 'fastify';

export interface StartMessage {
  mode: TargetMode;
  certPem: string;
  keyPem: string;
  /** Overrides of the production connection limits (fastify mode). */
  connectionLimits?: Partial<ConnectionLimits>;
}

const FIXED_ALLOW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: '3f33db0e-e2bf-4ccc-812f-b712a66f202d', allowed: true },
});

interface ParsedReview {
  apiVersion?: string;
  request?: { uid?: string };
}

/** The reference's answer: an allow in the caller's apiVersion with the caller's uid. */
function echoAllow(body: string): string {
  const review = JSON.parse(body) as ParsedReview;
  return JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request?.uid, allowed: true } });
}

/** node:https with the same TLS policy as the webhook server, nothing else. */
function startRaw(message: StartMessage): Promise<number> {
  const parse = message.mode === 'reference';
  const server = https.createServer(serverTlsOptions(message), (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      if (parse) body += chunk;
    });
    req.on('end', () => {
      const answer = parse ? echoAllow(body) : FIXED_ALLOW;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 75_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

export interface TargetStats {
  type: 'stats';
  rssBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
  /** The webhook server's open TCP connections (fastify mode only). */
  openConnections: number | undefined;
  /** Whether the figures are after a full GC (the process runs with --expose-gc). */
  afterGc: boolean;
}

let webhookServer: WebhookServer | undefined;

async function startFastify(message: StartMessage): Promise<number> {
  // The production logger (src/lifecycle/logger.ts) at its default level (info), to /dev/null so
  // the measurement is of the server, not of a terminal.
  const logger = fixedFieldsLogger(createLogger('info', '/dev/null'), { component: 'admission' });
  const server = (webhookServer = createWebhookServer({
    registry: new WebhookRegistry(benchWebhooks()),
    tls: { certPem: message.certPem, keyPem: message.keyPem },
    host: '127.0.0.1',
    port: 0,
    logger,
    metricsRegistry: new Registry(),
    connectionLimits: message.connectionLimits,
  }));
  return (await server.listen()).port;
}

process.once('message', (message: StartMessage) => {
  const start = message.mode === 'fastify' ? startFastify : startRaw;
  start(message).then(
    (port) => process.send?.({ port }),
    (error: Error) => {
      console.error(error);
      process.exit(1);
    },
  );
});
process.on('message', (message: { type?: string }) => {
  if (message.type !== 'stats') return;
  const gc = (globalThis as { gc?: () => void }).gc;
  // Twice: the first pass may leave finalised objects for the second.
  gc?.();
  gc?.();
  const memory = process.memoryUsage();
  const stats: TargetStats = { type: 'stats', rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, externalBytes: memory.external, openConnections: webhookServer?.openConnections(), afterGc: gc !== undefined };
  process.send?.(stats);
});
process.on('disconnect', () => process.exit(0));
// An exit of its own on SIGTERM, so that under --cpu-prof the profile is written.
process.on('SIGTERM', () => process.exit(0));
