/**
 * The HTTPS admission server: fastify's routes for the webhook paths (a review from the body to
 * the answer is review/review.ts), JSON only, the answers' headers, the secure context swapped
 * on rotation, and the bounded close.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Server as HttpsServer } from 'node:https';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { NamespaceSource } from '../admission/namespace-object.js';
import type { WebhookType } from '../admission/types.js';
import type { WebhookRegistry } from '../webhooks/registry.js';
import { addClientCertificateGate } from './client-certificate-gate.js';
import {
  capConnections,
  clientErrorHandler,
  closeAfterAnswer,
  ConnectionTracker,
  httpsLimitOptions,
  IdleSocketTracker,
  resolveConnectionLimits,
  type ConnectionLimits,
} from './connections.js';
import { handlerMetrics } from './handler-metrics.js';
import { BODY_LIMIT_BYTES, requestErrorReply } from './request-errors.js';
import { admissionMetrics } from './review/metrics.js';
import { answerReview, errorBody, type ReviewAnswer, type ReviewDeps, type UnknownEntries } from './review/review.js';
import { SECURITY_HEADER_LIST, SECURITY_HEADERS } from './security-headers.js';
import { addServedEntriesRoute } from './served-entries-route.js';
import { secureContextOptions, serverTlsOptions, type ServerTlsMaterial, type ServingCertificate } from './tls-options.js';

export interface WebhookServerOptions {
  /** Looked up on every request: replacing its contents takes effect at once. */
  registry: WebhookRegistry;
  tls: ServerTlsMaterial;
  host: string;
  /** 0 picks a free port (see listen()'s result). */
  port: number;
  logger: Logger;
  metricsRegistry: Registry;
  /** Timeouts and size limits per connection; production defaults in DEFAULT_CONNECTION_LIMITS. */
  connectionLimits?: Partial<ConnectionLimits>;
  /** How calls naming entries this replica does not know are answered (default: as not served). */
  unknownEntries?: UnknownEntries;
  /** What handlers log through (context.log: a child per review); default `logger`. */
  handlerLogger?: Logger;
  /** The cluster's Namespaces, for handlers' context.namespaceObject (the lifecycle's cache). */
  namespaces?: NamespaceSource;
}

export interface CloseResult {
  /** True when everything finished before the deadline; false when sockets had to be destroyed. */
  drained: boolean;
  durationMs: number;
  /** Sockets still open at the deadline and destroyed. */
  destroyedSockets: number;
}

export interface WebhookServer {
  listen(): Promise<{ port: number }>;
  /** New connections get this certificate; open keep-alive connections keep theirs. */
  updateCertificate(certificate: ServingCertificate): void;
  /** Replaces the client CA; only when the server was started with one (client-certificate mode). */
  updateClientCa(clientCaPem: string): void;
  /** TCP connections open right now, TLS handshakes in progress included. */
  openConnections(): number;
  /**
   * From now on every answer carries `Connection: close` (from SIGTERM on, through the shutdown
   * delay), so callers' pooled keep-alive connections wind down one answer at a time instead of
   * being cut at the close. Everything is still accepted and answered, new connections included.
   */
  stopKeepAlive(): void;
  /**
   * Stops accepting, lets in-flight requests finish, answers requests still arriving on open
   * keep-alive connections normally with `Connection: close`, closes connections idle for at
   * least a second (others once they are: one busy a moment ago may be carrying the caller's
   * next request), and destroys whatever is left at `deadlineMs`. Resolves, never rejects.
   */
  close(deadlineMs: number): Promise<CloseResult>;
}

const WEBHOOK_PATH = /^\/(validate|mutate)\/[^?]*(\?.*)?$/;
/** A grouped webhook's path names its members: up to 64 names of up to 63 characters. */
const MAX_PATH_PARAM_LENGTH = 8192;
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/** How often, during the close, connections that have become idle long enough are closed. */
const IDLE_SWEEP_MS = 100;

/** Shared between the routes and the shutdown: set by stopKeepAlive() or when close() begins. */
interface ServerState {
  endConnections: boolean;
  /** Closes the pooled connections idle long enough to be safe to close. */
  closeLongIdle: () => void;
}

type ReviewRequest = FastifyRequest<{ Params: { name: string; '*'?: string }; Querystring: { timeout?: string } }>;

/**
 * A review route's handler. Not an async function: a synchronous handler's review is answered in
 * the same turn, with no promise for fastify to wait on. `/validate/<name>` is an entry;
 * `/validate/<group>/<members>` a grouped webhook.
 */
function reviewRoute(deps: ReviewDeps, state: ServerState, type: WebhookType) {
  return (request: ReviewRequest, reply: FastifyReply): Promise<void> | undefined => {
    const members = request.params['*'];
    const call = { type, name: request.params.name, ...(members !== undefined ? { members } : {}), timeout: request.query.timeout, body: request.body };
    const answer = answerReview(deps, call);
    if (answer instanceof Promise) return answer.then((settled) => sendReview(state, reply, settled));
    sendReview(state, reply, answer);
    return undefined;
  };
}

/**
 * A review's answer, its headers written as one flat list on the hijacked reply: fastify's
 * per-header bookkeeping cost about 8% of the instructions per review, for headers fixed at start.
 */
function sendReview(state: ServerState, reply: FastifyReply, answer: ReviewAnswer): void {
  // A replica shutting down that cannot answer (a retry: its policy is behind) sends every caller
  // elsewhere. kube-apiserver retries on the next idle connection of its pool, and during a drain
  // many of those lead here, where new connections no longer do: closing the long-idle ones first
  // makes the retry dial anew instead of spending its attempts here.
  if (answer.closeConnection && state.endConnections) state.closeLongIdle();
  reply.hijack();
  const headers = [...SECURITY_HEADER_LIST, 'content-type', JSON_CONTENT_TYPE, 'content-length', String(Buffer.byteLength(answer.body))];
  for (const [name, value] of Object.entries(answer.headers ?? {})) headers.push(name, value);
  if (state.endConnections || answer.closeConnection) headers.push('connection', 'close');
  reply.raw.writeHead(answer.statusCode, headers);
  reply.raw.end(answer.body);
}

/** Every other answer (no route, wrong method or media type, body too large, an error), through fastify's reply. */
function send(state: ServerState, reply: FastifyReply, statusCode: number, body: string): FastifyReply {
  if (statusCode === 413) {
    // Sent before the body was read. fastify's Connection: close would make node destroy the
    // socket with the rest of the body unread, and the reset can take the answer with it.
    reply.removeHeader('connection');
    closeAfterAnswer(reply.request.raw, reply.raw);
  } else if (state.endConnections) {
    // A request routed before close began may still be answered after it: it ends its connection too.
    reply.header('connection', 'close');
  }
  return reply.code(statusCode).headers(SECURITY_HEADERS).header('content-type', JSON_CONTENT_TYPE).send(body);
}

/** A JSON body as a string, parsed here; the error fastify answers says what is wrong. */
function parseJson(_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void): void {
  const text = body as string;
  if (text.length === 0) return done(Object.assign(new Error('body is empty: an AdmissionReview is expected'), { statusCode: 400 }));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return done(Object.assign(new Error(`body is not valid JSON: ${(error as Error).message}`), { statusCode: 400 }));
  }
  done(null, parsed);
}

function buildApp(options: WebhookServerOptions, limits: ConnectionLimits, deps: ReviewDeps, state: ServerState): FastifyInstance<HttpsServer> {
  const app = Fastify({
    https: { ...serverTlsOptions(options.tls), ...httpsLimitOptions(limits) },
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    clientErrorHandler: clientErrorHandler(limits, deps.logger),
    bodyLimit: BODY_LIMIT_BYTES,
    // Requests arriving on open keep-alive sockets while closing are answered normally (fastify
    // adds Connection: close): a 503 would be a failed call for kube-apiserver.
    return503OnClosing: false,
    // One log line per review is written by the review itself; fastify's per-request child
    // loggers would cost throughput and duplicate it.
    logger: false,
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
  }) as unknown as FastifyInstance<HttpsServer>;
  // Only JSON: everything else (fastify's built-in text/plain included) is answered 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJson);
  if (options.tls.clientCaPem !== undefined) addClientCertificateGate(app as unknown as FastifyInstance, deps.logger, () => state.endConnections);
  for (const [prefix, type] of [['/validate', 'validating'], ['/mutate', 'mutating']] as const) {
    app.post(`${prefix}/:name`, reviewRoute(deps, state, type));
    app.post(`${prefix}/:name/*`, reviewRoute(deps, state, type));
  }
  addServedEntriesRoute(app as unknown as FastifyInstance, deps.registry);
  answerTheRest(app, deps, state);
  return app;
}

/** No route (a wrong method on a webhook path is a 405), and every error before or outside a review. */
function answerTheRest(app: FastifyInstance<HttpsServer>, deps: ReviewDeps, state: ServerState): void {
  app.setNotFoundHandler((request, reply) => {
    if (WEBHOOK_PATH.test(request.url)) {
      deps.logger.warn({ method: request.method, url: request.url }, 'wrong method on a webhook path');
      return send(state, reply.header('allow', 'POST'), 405, errorBody(`method ${request.method} is not allowed: webhooks take POST`));
    }
    deps.logger.warn({ method: request.method, url: request.url }, 'request for an unknown path');
    return send(state, reply, 404, errorBody(`no route for ${request.method} ${request.url.split('?')[0]}: use POST /validate/<name> or /mutate/<name>`));
  });
  app.setErrorHandler((error, request, reply) => {
    const answer = requestErrorReply(deps.logger, error, request.raw);
    return send(state, reply, answer.statusCode, answer.body);
  });
}

/** What every review reads of the server. */
function reviewDeps(options: WebhookServerOptions, stop: AbortSignal): ReviewDeps {
  return {
    registry: options.registry,
    logger: options.logger,
    metrics: admissionMetrics(options.metricsRegistry),
    stop,
    ...(options.unknownEntries ? { unknownEntries: options.unknownEntries } : {}),
    handlerServices: { logger: options.handlerLogger ?? options.logger, metrics: handlerMetrics(options.metricsRegistry) },
    ...(options.namespaces ? { namespaces: options.namespaces } : {}),
  };
}

/** What the bounded close acts on. */
interface Closing {
  app: FastifyInstance<HttpsServer>;
  state: ServerState;
  connections: ConnectionTracker;
  stopReviews: AbortController;
  stallSweep: NodeJS.Timeout;
  logger: Logger;
}

async function drain({ app, state, connections, stopReviews, stallSweep, logger }: Closing, deadlineMs: number): Promise<CloseResult> {
  const started = performance.now();
  state.endConnections = true;
  let destroyedSockets = 0;
  let forced = false;
  const sweep = setInterval(state.closeLongIdle, IDLE_SWEEP_MS);
  const timer = setTimeout(() => {
    forced = true;
    stopReviews.abort(new Error('webhook server closed'));
    destroyedSockets = connections.destroyAll();
    app.server.closeAllConnections();
  }, Math.max(0, deadlineMs));
  try {
    await app.close();
  } catch (error) {
    logger.error({ error: (error as Error).message }, 'closing the webhook server failed');
  } finally {
    clearTimeout(timer);
    clearInterval(sweep);
    clearInterval(stallSweep);
  }
  const result = { drained: !forced, durationMs: Math.round(performance.now() - started), destroyedSockets };
  logger.info(result, 'webhook server closed');
  return result;
}

export function createWebhookServer(options: WebhookServerOptions): WebhookServer {
  const stopReviews = new AbortController();
  const deps = reviewDeps(options, stopReviews.signal);
  const limits = resolveConnectionLimits(options.connectionLimits);
  // The closure runs only on requests and at the close, once `idle` exists.
  const state: ServerState = { endConnections: false, closeLongIdle: () => void idle.closeIdleFor(limits.evictIdleAfterMs) };
  const app = buildApp(options, limits, deps, state);
  const connections = new ConnectionTracker(app.server);
  const idle = new IdleSocketTracker(app.server);
  capConnections(app.server, limits, idle, deps.logger);
  // Unreferenced: only the listening server keeps the process alive.
  const stallSweep = setInterval(() => idle.closeStalled(limits.socketIdleTimeoutMs), Math.ceil(limits.socketIdleTimeoutMs / 4)).unref();
  // node's close() (which fastify's calls) closes every idle keep-alive connection at once, also
  // one whose caller is writing its next request on it right now: only those idle for
  // evictIdleAfterMs are closed here, the others by the sweep in drain() once they are.
  app.server.closeIdleConnections = state.closeLongIdle;
  let material: ServerTlsMaterial = { ...options.tls };
  let closing: Promise<CloseResult> | undefined;
  const applyMaterial = (next: ServerTlsMaterial): void => {
    app.server.setSecureContext(secureContextOptions(next));
    material = next;
  };
  return {
    async listen() {
      await app.listen({ host: options.host, port: options.port });
      const address = app.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : options.port;
      options.logger.info({ host: options.host, port, clientCertificates: material.clientCaPem !== undefined }, 'webhook server listening');
      return { port };
    },
    updateCertificate: (certificate) => applyMaterial({ ...material, certPem: certificate.certPem, keyPem: certificate.keyPem }),
    updateClientCa(clientCaPem) {
      if (material.clientCaPem === undefined) throw new Error('the webhook server was started without a client CA: client-certificate mode cannot be turned on at runtime');
      applyMaterial({ ...material, clientCaPem });
    },
    openConnections: () => connections.size,
    stopKeepAlive() {
      if (state.endConnections) return;
      state.endConnections = true;
      options.logger.info('answers now carry Connection: close, so pooled connections wind down before the close');
    },
    close(deadlineMs) {
      closing ??= drain({ app, state, connections, stopReviews, stallSweep, logger: options.logger }, deadlineMs);
      return closing;
    },
  };
}
