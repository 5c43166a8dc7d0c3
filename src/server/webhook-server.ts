import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import https, { type Server as HttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { NamespaceSource } from '../admission/namespace-object.js';
import type { WebhookRegistry } from '../webhooks/registry.js';
import type { WebhookType } from '../admission/types.js';
import { applyServerLimits, capConnections, clientErrorHandler, closeAfterAnswer, httpsLimitOptions, resolveConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { ConnectionTracker } from './connection-tracker.js';
import { IdleSocketTracker } from './idle-eviction.js';
import { handlerMetrics } from './handler-metrics.js';
import { admissionMetrics } from './metrics.js';
import { BODY_LIMIT_BYTES, parseJsonBody, requestErrorReply } from './request-errors.js';
import { reviewLane } from './review-lane.js';
import { answerReview, errorBody, type ReviewRouteDeps, type RouteReply, type UnknownEntries } from './review-route.js';
import { SECURITY_HEADERS } from './security-headers.js';
import { addClientCertificateGate } from './client-certificate-gate.js';
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
const MAX_PATH_PARAM_LENGTH = 8192;
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Shared between the app and the shutdown: set by stopKeepAlive() or when close() begins. */
interface ServerState {
  endConnections: boolean;
  /** Closes the pooled connections idle long enough to be safe to close (set once the tracker exists). */
  closeLongIdle?: () => void;
}

/** How often, during the close, connections that have become idle long enough are closed. */
const IDLE_SWEEP_MS = 100;

function send(state: ServerState, reply: FastifyReply, statusCode: number, body: string): FastifyReply {
  // A request routed before close began may still be answered after it: it must end its
  // connection too, or the socket would idle until the keep-alive timeout.
  if (statusCode === 413) {
    // Sent before the body was read. fastify's Connection: close would make node destroy the
    // socket with the rest of the body unread, and the reset can take the answer with it.
    reply.removeHeader('connection');
    closeAfterAnswer(reply.request.raw, reply.raw);
  } else if (state.endConnections) {
    reply.header('connection', 'close');
  }
  return reply.code(statusCode).headers(SECURITY_HEADERS).header('content-type', JSON_CONTENT_TYPE).send(body);
}

/** SECURITY_HEADERS as a flat [name, value, ...] list, which node writes without per-reply bookkeeping. */
const SECURITY_HEADER_LIST: readonly string[] = Object.entries(SECURITY_HEADERS).flat();

/**
 * Every answer of the review lane and of the review route: the same headers as send(), written
 * straight to node's response. fastify's per-header bookkeeping cost ~8% of the instructions per
 * review (measured: `git log -p BENCHMARKS.md`); the others (no route, wrong method or media type, body too large, no
 * client certificate) keep going through fastify.
 */
function writeReviewAnswer(state: ServerState, response: ServerResponse, answer: RouteReply): void {
  // A replica shutting down that cannot answer (a retry: its policy is behind) sends every caller
  // elsewhere. kube-apiserver retries on the next idle connection of its pool, and during a drain
  // many of those lead here, where new connections no longer do (kube-proxy sends them to ready
  // replicas): closing the long-idle ones first, before this answer leaves, makes the retry dial
  // anew instead of spending its attempts here.
  if (answer.closeConnection && state.endConnections) state.closeLongIdle?.();
  const { body } = answer;
  const headers = [...SECURITY_HEADER_LIST, 'content-type', JSON_CONTENT_TYPE, 'content-length', String(Buffer.byteLength(body))];
  for (const [name, value] of Object.entries(answer.headers ?? {})) headers.push(name, value);
  if (state.endConnections || answer.closeConnection) headers.push('connection', 'close');
  response.writeHead(answer.statusCode, headers);
  response.end(body);
}

function sendReviewAnswer(state: ServerState, reply: FastifyReply, answer: RouteReply): void {
  reply.hijack();
  writeReviewAnswer(state, reply.raw, answer);
}

type ReviewRequest = FastifyRequest<{ Params: { name: string; '*'?: string }; Querystring: { timeout?: string } }>;

/**
 * Not an async function: a synchronous handler's review is answered in the same turn, with no
 * promise for fastify to wait on (the reply is hijacked, so returning nothing is an answer).
 * `/validate/<name>` is an entry; `/validate/<group>/<members>` a grouped webhook.
 */
function reviewHandler(deps: ReviewRouteDeps, state: ServerState, type: WebhookType) {
  return (request: ReviewRequest, reply: FastifyReply): Promise<void> | undefined => {
    const members = request.params['*'];
    const answer = answerReview(deps, { type, name: request.params.name, ...(members !== undefined ? { members } : {}), timeout: request.query.timeout, body: request.body });
    if (answer instanceof Promise) return answer.then((settled) => sendReviewAnswer(state, reply, settled));
    sendReviewAnswer(state, reply, answer);
    return undefined;
  };
}

function buildApp(options: WebhookServerOptions, limits: ConnectionLimits, deps: ReviewRouteDeps, state: ServerState): FastifyInstance<HttpsServer> {
  const takeReview = reviewLane({
    maxUrlLength: MAX_PATH_PARAM_LENGTH,
    clientCertificatesRequired: options.tls.clientCaPem !== undefined,
    answer: (call) => answerReview(deps, call),
    answerError: (error, request) => requestErrorReply(deps.logger, error, request),
    write: (response, answer) => writeReviewAnswer(state, response, answer),
  });
  const httpsOptions: HttpsServerOptions = { ...serverTlsOptions(options.tls), ...httpsLimitOptions(limits) };
  const app = Fastify({
    https: httpsOptions,
    // kube-apiserver's calls take the review lane; everything else is fastify's.
    serverFactory: (fastifyHandler) => {
      const server = https.createServer(httpsOptions, (request, response) => {
        if (!takeReview(request, response)) fastifyHandler(request, response);
      });
      applyServerLimits(server, limits);
      return server;
    },
    clientErrorHandler: clientErrorHandler(limits, deps.logger),
    bodyLimit: BODY_LIMIT_BYTES,
    // Requests arriving on open keep-alive sockets while closing are answered normally (fastify
    // adds Connection: close): a 503 would be a failed call for kube-apiserver.
    return503OnClosing: false,
    // One log line per review is written by the route itself; fastify's per-request child
    // loggers would cost throughput and duplicate it.
    logger: false,
    // A grouped webhook's path names its members: up to 64 names of up to 63 characters.
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
  }) as unknown as FastifyInstance<HttpsServer>;

  // Only JSON: everything else (fastify's built-in text/plain included) is answered 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  if (options.tls.clientCaPem !== undefined) addClientCertificateGate(app as unknown as FastifyInstance, deps.logger, () => state.endConnections);
  app.post('/validate/:name', reviewHandler(deps, state, 'validating'));
  app.post('/mutate/:name', reviewHandler(deps, state, 'mutating'));
  app.post('/validate/:name/*', reviewHandler(deps, state, 'validating'));
  app.post('/mutate/:name/*', reviewHandler(deps, state, 'mutating'));
  addServedEntriesRoute(app as unknown as FastifyInstance, deps.registry);

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
  return app;
}

export function createWebhookServer(options: WebhookServerOptions): WebhookServer {
  const stopReviews = new AbortController();
  const deps: ReviewRouteDeps = {
    registry: options.registry,
    logger: options.logger,
    metrics: admissionMetrics(options.metricsRegistry),
    stop: stopReviews.signal,
    ...(options.unknownEntries ? { unknownEntries: options.unknownEntries } : {}),
    handlerServices: { logger: options.handlerLogger ?? options.logger, metrics: handlerMetrics(options.metricsRegistry) },
    ...(options.namespaces ? { namespaces: options.namespaces } : {}),
  };
  const state: ServerState = { endConnections: false };
  const limits = resolveConnectionLimits(options.connectionLimits);
  const app = buildApp(options, limits, deps, state);
  const connections = new ConnectionTracker(app.server);
  const idle = new IdleSocketTracker(app.server);
  capConnections(app.server, limits, idle, deps.logger);
  // Unreferenced: only the listening server keeps the process alive.
  const stallSweep = setInterval(() => idle.closeStalled(limits.socketIdleTimeoutMs), Math.ceil(limits.socketIdleTimeoutMs / 4)).unref();
  // node's close() (which fastify's calls) closes every idle keep-alive connection at once, also
  // one whose caller is writing its next request on it right now: only those idle for
  // evictIdleAfterMs are closed here, the others by the sweep in drain() once they are.
  app.server.closeIdleConnections = () => void idle.closeIdleFor(limits.evictIdleAfterMs);
  state.closeLongIdle = () => void idle.closeIdleFor(limits.evictIdleAfterMs);
  let material: ServerTlsMaterial = { ...options.tls };
  let closing: Promise<CloseResult> | undefined;

  const applyMaterial = (next: ServerTlsMaterial): void => {
    app.server.setSecureContext(secureContextOptions(next));
    material = next;
  };

  async function drain(deadlineMs: number): Promise<CloseResult> {
    const started = performance.now();
    state.endConnections = true;
    let destroyedSockets = 0;
    let forced = false;
    const sweep = setInterval(() => idle.closeIdleFor(limits.evictIdleAfterMs), IDLE_SWEEP_MS);
    const timer = setTimeout(() => {
      forced = true;
      stopReviews.abort(new Error('webhook server closed'));
      destroyedSockets = connections.destroyAll();
      app.server.closeAllConnections();
    }, Math.max(0, deadlineMs));
    try {
      await app.close();
    } catch (error) {
      options.logger.error({ error: (error as Error).message }, 'closing the webhook server failed');
    } finally {
      clearTimeout(timer);
      clearInterval(sweep);
      clearInterval(stallSweep);
    }
    const durationMs = Math.round(performance.now() - started);
    const result = { drained: !forced, durationMs, destroyedSockets };
    options.logger.info(result, 'webhook server closed');
    return result;
  }

  return {
    async listen() {
      await app.listen({ host: options.host, port: options.port });
      const address = app.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : options.port;
      options.logger.info({ host: options.host, port, clientCertificates: material.clientCaPem !== undefined }, 'webhook server listening');
      return { port };
    },
    updateCertificate(certificate) {
      applyMaterial({ ...material, certPem: certificate.certPem, keyPem: certificate.keyPem });
    },
    updateClientCa(clientCaPem) {
      if (material.clientCaPem === undefined) {
        throw new Error('the webhook server was started without a client CA: client-certificate mode cannot be turned on at runtime');
      }
      applyMaterial({ ...material, clientCaPem });
    },
    openConnections: () => connections.size,
    stopKeepAlive() {
      if (state.endConnections) return;
      state.endConnections = true;
      options.logger.info('answers now carry Connection: close, so pooled connections wind down before the close');
    },
    close(deadlineMs) {
      closing ??= drain(deadlineMs);
      return closing;
    },
  };
}
