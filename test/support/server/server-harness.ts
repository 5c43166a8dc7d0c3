/** Shared pieces of the server tests: a served registry over real TLS, a client, review builders. */
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import { Writable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { pino, type Level, type Logger } from 'pino';
import { Registry } from 'prom-client';
import type { WebhookGroup } from '../../../src/webhooks/grouping.js';
import type { NamespaceSource } from '../../../src/admission/namespace-object.js';
import { WebhookRegistry } from '../../../src/webhooks/registry.js';
import type { UnknownEntries } from '../../../src/server/review/review.js';
import type {
  MutatingHandler,
  MutatingWebhook,
  Operation,
  ValidatingHandler,
  ValidatingWebhook,
  Webhook,
  WebhookSpec,
} from '../../../src/admission/types.js';
import type { ConnectionLimits } from '../../../src/server/connections.js';
import { createWebhookServer, type WebhookServer } from '../../../src/server/webhook-server.js';
import { LOG_BASE } from '../../../src/lifecycle/logger.js';
import { readLogLine } from '../logs/log-lines.js';
import { createTestCa, issueServingCert, TEST_SERVER_NAME, type TestCa, type TestKeyPair } from '../tls/test-certs.js';

export interface CapturedLogs {
  logger: Logger;
  lines: Record<string, unknown>[];
  /** The same lines as written. */
  texts: string[];
}

/** A logger with the server's base fields whose lines are kept, each read strictly (log-lines.ts). */
export function captureLogs(level: Level = 'debug'): CapturedLogs {
  const lines: Record<string, unknown>[] = [];
  const texts: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) {
        if (text.trim() === '') continue;
        texts.push(text);
        lines.push(readLogLine(text, 'an in-process logger') ?? JSON.parse(text));
      }
      callback();
    },
  });
  return { logger: pino({ level, base: LOG_BASE }, sink), lines, texts };
}

const SPEC_DEFAULTS: Omit<WebhookSpec, 'name' | 'type'> = {
  rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  failurePolicy: 'Fail',
  sideEffects: 'None',
  timeoutSeconds: 10,
  matchPolicy: 'Equivalent',
};

export function validating(name: string, handler: ValidatingHandler, spec: Partial<WebhookSpec> = {}): ValidatingWebhook {
  return { ...SPEC_DEFAULTS, ...spec, name, type: 'validating', handler };
}

export function mutating(name: string, handler: MutatingHandler, spec: Partial<WebhookSpec> = {}): MutatingWebhook {
  return { ...SPEC_DEFAULTS, ...spec, name, type: 'mutating', handler };
}

export interface ReviewOptions {
  apiVersion?: string;
  operation?: Operation;
  uid?: string;
  dryRun?: boolean;
  labels?: Record<string, string>;
  image?: string;
}

/** An AdmissionReview as kube-apiserver sends it (local-cluster/CONTRACT.md 1.3). */
export function podReview(options: ReviewOptions = {}): Record<string, unknown> {
  const operation = options.operation ?? 'CREATE';
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'team-a', labels: options.labels ?? { app: 'web' }, creationTimestamp: null },
    spec: { containers: [{ name: 'c', image: options.image ?? 'nginx' }] },
    status: {},
  };
  return {
    apiVersion: options.apiVersion ?? 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: options.uid ?? randomUUID(),
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: 'web',
      namespace: 'team-a',
      operation,
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object: operation === 'DELETE' ? null : pod,
      oldObject: operation === 'CREATE' ? null : pod,
      dryRun: options.dryRun ?? false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}

export interface Served {
  server: WebhookServer;
  port: number;
  registry: WebhookRegistry;
  metricsRegistry: Registry;
  logs: CapturedLogs;
}

export interface ServeOptions {
  ca: TestCa;
  serving?: TestKeyPair;
  clientCaPem?: string;
  connectionLimits?: Partial<ConnectionLimits>;
  /** The server's log level; debug (every review line) unless given. */
  logLevel?: Level;
  /** Grouped webhooks made of `webhooks`, registered (and so served with their shared matching). */
  groups?: WebhookGroup[];
  unknownEntries?: UnknownEntries;
  /** Where handlers' context.namespaceObject comes from. */
  namespaces?: NamespaceSource;
}

export async function serve(webhooks: Webhook[], options: ServeOptions): Promise<Served> {
  const registry = new WebhookRegistry(webhooks, options.groups);
  const metricsRegistry = new Registry();
  const logs = captureLogs(options.logLevel);
  const serving = options.serving ?? issueServingCert(options.ca);
  const server = createWebhookServer({
    registry,
    tls: { certPem: serving.certPem, keyPem: serving.keyPem, clientCaPem: options.clientCaPem },
    host: '127.0.0.1',
    port: 0,
    logger: logs.logger,
    metricsRegistry,
    connectionLimits: options.connectionLimits,
    ...(options.unknownEntries ? { unknownEntries: options.unknownEntries } : {}),
    ...(options.namespaces ? { namespaces: options.namespaces } : {}),
  });
  const { port } = await server.listen();
  return { server, port, registry, metricsRegistry, logs };
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
  /** Local port of the client socket: equal ports mean the same (reused) connection. */
  localPort: number | undefined;
  /** Serial number of the certificate the server presented on this connection. */
  peerSerial: string | undefined;
}

export interface PostOptions {
  method?: string;
  headers?: Record<string, string>;
  agent?: https.Agent;
  /** Raw body; default the JSON of `body`. */
  raw?: string | Buffer;
  ca?: string;
  cert?: string;
  key?: string;
  /** The name to ask for and verify (default TEST_SERVER_NAME, the default namespace's). */
  servername?: string;
}

export function request(port: number, path: string, body: unknown, options: PostOptions & { ca: string }): Promise<HttpResult> {
  const payload = options.raw ?? (body === undefined ? undefined : JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'POST',
        servername: options.servername ?? TEST_SERVER_NAME,
        ca: options.ca,
        cert: options.cert,
        key: options.key,
        agent: options.agent ?? false,
        timeout: 20_000,
        headers: {
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        const socket = res.socket as TLSSocket;
        const localPort = socket.localPort;
        const peerSerial = socket.getPeerCertificate().serialNumber;
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, localPort, peerSerial });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', reject);
    req.end(payload);
  });
}

export interface ReviewResponse {
  apiVersion: string;
  kind: string;
  response: {
    uid: string;
    allowed: boolean;
    status?: { code: number; message: string; reason?: string; status?: string };
    patch?: string;
    patchType?: string;
    warnings?: string[];
    auditAnnotations?: Record<string, string>;
  };
}

export function decodePatch(patch: string | undefined): unknown {
  return patch === undefined ? undefined : JSON.parse(Buffer.from(patch, 'base64').toString());
}

export { createTestCa, issueServingCert, TEST_SERVER_NAME };
