import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export interface HealthServerOptions {
  host: string;
  /** 0 picks a free port (see listen()'s result). */
  port: number;
  metricsRegistry: Registry;
  logger: Logger;
}

/**
 * `draining`: shutting down but still serving everything (the delay, the teardown and its grace):
 * still 200, so the replica stays a `serving` endpoint. kube-apiserver reaches a terminating Pod
 * only when every endpoint of the Service is terminating (kube-proxy's fallback, KEP-1669, GA in
 * 1.28): a scale to zero or an uninstall, where it must be answered until the configurations are
 * gone. `shutting-down`: the listener is closing, 503.
 */
export type Readiness = 'starting' | 'ready' | 'not-ready' | 'draining' | 'shutting-down';

export interface HealthServer {
  listen(): Promise<{ port: number }>;
  /** The lifecycle says when the webhook server is serving and registered (true) or not (false). */
  setReady(ready: boolean): void;
  /** Shutdown began: a ready replica stays 200 (`draining`) while it still serves; any other answers 503 for good. */
  setShuttingDown(): void;
  /** The listener closes: from now on /readyz answers 503 for good. */
  setClosing(): void;
  readonly readiness: Readiness;
  close(deadlineMs: number): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function buildApp(options: HealthServerOptions, readiness: () => Readiness): FastifyInstance {
  const app = Fastify({ logger: false, return503OnClosing: true });
  // Answering at all proves the event loop turns; a wedged loop fails the kubelet's probe by timeout.
  app.get('/healthz', async (_request, reply) => reply.type(JSON_TYPE).send({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const state = readiness();
    return reply
      .code(state === 'ready' || state === 'draining' ? 200 : 503)
      .type(JSON_TYPE)
      .send({ status: state });
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await options.metricsRegistry.metrics();
    return reply.type(options.metricsRegistry.contentType).send(text);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).type(JSON_TYPE).send({ error: `no route for ${request.method} ${request.url}: use /healthz, /readyz or /metrics` }),
  );
  return app;
}

/** Plain-HTTP health and metrics listener on its own port, with a readiness the lifecycle controls. */
export function createHealthServer(options: HealthServerOptions): HealthServer {
  let state: Readiness = 'starting';
  const app = buildApp(options, () => state);
  return {
    async listen() {
      await app.listen({ host: options.host, port: options.port });
      const address = app.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : options.port;
      options.logger.info({ host: options.host, port }, 'health server listening');
      return { port };
    },
    setReady(ready) {
      if (state === 'shutting-down' || state === 'draining') return;
      state = ready ? 'ready' : 'not-ready';
    },
    setShuttingDown() {
      state = state === 'ready' ? 'draining' : 'shutting-down';
    },
    setClosing() {
      state = 'shutting-down';
    },
    get readiness() {
      return state;
    },
    async close(deadlineMs) {
      const timer = setTimeout(() => app.server.closeAllConnections(), Math.max(0, deadlineMs));
      try {
        await app.close();
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
