import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config } from '../config/types.js';
import { matchConditionsRefusedBy } from '../cel/match-conditions.js';
import { servedPolicyWebhooks } from '../policy/engine.js';
import { WebhookRegistry } from '../webhooks/registry.js';
import { webhookPath } from '../webhooks/group-path.js';
import type { Webhook } from '../admission/types.js';
import { createHealthServer, type HealthServer } from '../server/health-server.js';
import { resolveListenHost } from '../server/listen-host.js';
import { createWebhookServer, type WebhookServer } from '../server/webhook-server.js';
import { serviceHostName } from '../tls/sans.js';
import { createTlsMetrics } from '../tls/metrics.js';
import type { KubernetesVersion } from '../util/kubernetes-version.js';
import { GeneratedMaterialSource } from '../tls/generated-source.js';
import type { ClientCaSource, TlsMaterialSource } from '../tls/types.js';
import { EXIT_FAILURE, EXIT_INVALID_CONFIG, EXIT_OK } from './exit-codes.js';
import { fixedFieldsLogger } from './logger.js';
import { loadPolicyOrThrow, PolicyFileError, PolicyReloader } from './policy-reloader.js';
import { serverAuthorization } from './authorization.js';
import { connectToCluster, type ClusterConnection } from './cluster-connection.js';
import { namespaceObjects, type NamespaceObjects } from './namespace-objects.js';
import type { Registration } from './registration.js';
import { servedAudit, type ServedAudit } from './background-audit.js';
import { runSelfCheck, verifyWithEach } from './self-check.js';
import { PROPAGATION_GRACE_MS } from './propagation-grace.js';
import { followGeneratedSecret } from './secret-watch.js';
import { ServedHandlers } from './served-handlers.js';
import { SkewJudge } from './skew-judge.js';
import { ServingTrust } from './serving-trust.js';
import { startLiveView, type LiveView } from './live-view.js';
import { shutdown } from './shutdown.js';
import { createClientCa, createTlsSource } from './tls-source.js';

export interface RunOptions {
  /** Aborting it starts the graceful shutdown (SIGTERM/SIGINT in main.ts). */
  stopSignal: AbortSignal;
  /** Aborting it cuts the shutdown short (a second signal). */
  abortShutdown?: AbortSignal;
  logger: Logger;
  /** Handlers from the TypeScript API, served next to the policy file's. */
  customWebhooks?: readonly Webhook[];
  /** Called once the server is ready (tests and the library API). */
  onReady?: (ports: { port: number; healthPort: number }) => void;
  /** Called once the handlers are served: the dev loop swaps its reloaded module's webhooks in through it. */
  onServing?: (custom: CustomWebhookUpdates) => void;
}

/** How a new version of the custom webhooks replaces the served one. */
export interface CustomWebhookUpdates {
  /** Serves `webhooks` instead of the current custom ones (and re-registers); throws, serving what it served, when the set is invalid. */
  replace(webhooks: readonly Webhook[]): void;
}


/** Everything started so far; shutdown closes what exists. */
interface Started {
  /** The API client; its kept-alive connections are ended after everything else has stopped. */
  cluster?: ClusterConnection;
  health?: HealthServer;
  server?: WebhookServer;
  tls?: TlsMaterialSource;
  clientCa?: ClientCaSource;
  policy?: PolicyReloader;
  registration?: Registration;
  audit?: ServedAudit;
  namespaces?: NamespaceObjects;
  live?: LiveView;
  /** Loops that end with the lifetime signal (trust, Secret watch); shutdown waits for them. */
  loops: Promise<void>[];
  ready?: boolean;
}

/** A curl command that sends the bundled sample review, verifying the service name like kube-apiserver. */
function sampleReviewCommand(config: Config, port: number): string {
  const host = serviceHostName(config.serviceName, config.namespace);
  return [
    `curl --cacert ${config.certDir}/ca.crt --resolve ${host}:${port}:127.0.0.1`,
    `-H 'Content-Type: application/json' --data @examples/pod-create-review.json`,
    `'https://${host}:${port}/mutate/default-labels?timeout=5s'`,
  ].join(' ');
}

/** `https://host:port` (IPv6 literals bracketed) that kube-apiserver dials in the dev loop. */
function reachableUrlBase(host: string, port: number): string {
  return `https://${isIPv6(host) ? `[${host}]` : host}:${port}`;
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * The whole life of the server: startup in the design's order, serving until `stopSignal`,
 * then the bounded shutdown. Resolves with the process exit code; never rejects.
 */
export async function runServer(config: Config, options: RunOptions): Promise<number> {
  const { logger } = options;
  const lifetime = new AbortController();
  const onStop = (): void => lifetime.abort(new Error('shutting down'));
  options.stopSignal.addEventListener('abort', onStop, { once: true });
  if (options.stopSignal.aborted) onStop();
  const started: Started = { loops: [] };
  let exitCode = EXIT_OK;
  try {
    await startUp(config, options, started, lifetime.signal);
    await untilAborted(options.stopSignal);
    logger.info('shutdown requested');
  } catch (error) {
    if (options.stopSignal.aborted) {
      logger.info('shutdown requested during startup');
    } else {
      exitCode = error instanceof PolicyFileError ? EXIT_INVALID_CONFIG : EXIT_FAILURE;
      const problems = error instanceof PolicyFileError ? { problems: error.problems } : {};
      logger.error({ error: error instanceof Error ? error.message : String(error), ...problems }, 'startup failed; shutting down');
    }
  }
  lifetime.abort(new Error('shutting down'));
  const result = await shutDown(config, options, started);
  return exitCode !== EXIT_OK ? exitCode : result.ok ? EXIT_OK : EXIT_FAILURE;
}

async function startUp(config: Config, options: RunOptions, started: Started, signal: AbortSignal): Promise<void> {
  const { logger } = options;
  const metricsRegistry = new Registry();
  collectDefaultMetrics({ register: metricsRegistry });
  const customWebhooks = options.customWebhooks ?? [];

  const cluster = (started.cluster = await connectToCluster(config));
  const authorization = await serverAuthorization(cluster, logger);
  const policyOptions = {
    ownNamespace: config.namespace,
    ...(config.kubernetesVersion ? { kubernetesVersion: config.kubernetesVersion } : {}),
    ...(authorization.source ? { authorization: authorization.source } : {}),
  };
  const initialPolicy = await loadPolicyOrThrow(config.policyFile, policyOptions);
  await authorization.check(initialPolicy.webhooks, signal);
  const registry = new WebhookRegistry();
  // Every replica that registers follows the live configurations: what they trust and route to.
  let urlBase: string | undefined;
  const live = (started.live = config.register && cluster ? await startLiveView(config, cluster.api, logger, signal, () => urlBase) : undefined);
  const handlers = new ServedHandlers(
    { registry, customWebhooks, routedPaths: live?.routedPaths, graceMs: PROPAGATION_GRACE_MS, signal, logger },
    servedPolicyWebhooks(initialPolicy.policy, initialPolicy.webhooks),
    initialPolicy.policy.grouping,
  );
  const namespaces = (started.namespaces = await namespaceObjects({ registry, kubeConfig: cluster?.api.kubeConfig, logger, signal }));

  const { host, fellBackBecause } = await resolveListenHost(config.host);
  if (fellBackBecause) logger.warn({ wanted: config.host, host, error: fellBackBecause }, 'this host has no IPv6; listening on IPv4 addresses only');
  // Up (and not Ready) before the first wait on the API: generate mode's Secret may take a while
  // (429s, an apiserver restart), and a startupProbe must see a live process meanwhile.
  const health = createHealthServer({ host, port: config.healthPort, metricsRegistry, logger });
  const { port: healthPort } = await health.listen();
  started.health = health;

  // The dev loop keeps its material in --cert-dir (as a server without a cluster does): it writes no Secret.
  const tls = (started.tls = createTlsSource(config, config.reachableAt ? undefined : cluster, logger, createTlsMetrics(metricsRegistry)));
  const material = await tls.load(signal);
  const clientCa = (started.clientCa = createClientCa(config, logger, createTlsMetrics(metricsRegistry)));
  const clientCaPem = clientCa ? await clientCa.load(signal) : undefined;

  // A replica that follows the live configurations can tell an entry a newer policy added from one an older had.
  const unknownEntries =
    live &&
    new SkewJudge({
      snapshot: () => live.live.snapshot,
      service: { name: config.serviceName, namespace: config.namespace },
    });
  const server = createWebhookServer({
    registry,
    tls: { certPem: material.certPem, keyPem: material.keyPem, clientCaPem },
    host,
    port: config.port,
    logger: fixedFieldsLogger(logger, { component: 'admission' }),
    // Handlers log what they like: their lines keep the key material redaction.
    handlerLogger: logger.child({ component: 'handler' }),
    metricsRegistry,
    ...(unknownEntries ? { unknownEntries } : {}),
    namespaces: namespaces.source,
  });
  const { port } = await server.listen();
  started.server = server;
  // The name kube-apiserver verifies: the Service's, or the host of the dev loop's URL.
  const serverName = config.reachableAt?.host ?? serviceHostName(config.serviceName, config.namespace);
  if (config.reachableAt) urlBase = reachableUrlBase(config.reachableAt.host, config.reachableAt.port ?? port);
  const trust = new ServingTrust(
    {
      serve: (next) => server.updateCertificate(next),
      verify: (bundles, verifySignal) => verifyWithEach({ host: config.host, port, serverName }, bundles, verifySignal),
      graceMs: PROPAGATION_GRACE_MS,
      logger: logger.child({ component: 'serving-trust' }),
    },
    material,
  );
  tls.on('serving-change', (next) => trust.offer(next));
  trust.on('readiness', (ready) => {
    if (started.ready) health.setReady(ready);
  });
  started.loops.push(trust.run(live?.live, signal));
  tls.start(signal);
  if (cluster && tls instanceof GeneratedMaterialSource) started.loops.push(followGeneratedSecret(config, cluster.api, tls, logger.child({ component: 'tls' }), signal));
  clientCa?.on('client-ca-change', (pem) => server.updateClientCa(pem));
  clientCa?.start(signal);

  const firstWebhook = handlers.desired()[0];
  const selfCheck = await runSelfCheck({
    host,
    port,
    serverName,
    caBundlePem: trust.served.caBundlePem,
    path: clientCa || !firstWebhook ? undefined : webhookPath(firstWebhook),
    namespace: config.namespace,
    deadlineMs: config.selfCheckTimeoutMs,
    signal,
    logger,
  });
  logger.info(selfCheck, 'self-check passed');

  let customWebhooksNow = customWebhooks;
  options.onServing?.({
    replace: (webhooks) => {
      handlers.replaceCustom(webhooks);
      customWebhooksNow = webhooks;
      started.registration?.refresh('custom handlers changed');
      started.audit?.policyChanged();
    },
  });
  const policy = (started.policy = new PolicyReloader(
    {
      path: config.policyFile,
      ownNamespace: config.namespace,
      handlers,
      pollIntervalMs: config.watchPollIntervalMs,
      logger,
      metricsRegistry,
      onApplied: () => {
        started.registration?.refresh('policy changed');
        started.audit?.policyChanged();
      },
      ...(authorization.source ? { authorization: authorization.source } : {}),
      accept: (loaded, acceptSignal) => authorization.check(loaded.webhooks, acceptSignal),
    },
    initialPolicy,
    policyOptions.kubernetesVersion,
  ));
  policy.start(signal);
  // Before registering: kube-apiserver must not call a replica that cannot read namespaceObject yet.
  await namespaces.ready(signal);

  if (config.register && cluster) {
    const [{ Registration }, { createRegistrationMetrics }] = await Promise.all([import('./registration.js'), import('../kube/registration-metrics.js')]);
    const audit = (started.audit = await servedAudit({ config, policy, customWebhooks: () => customWebhooksNow, registry: metricsRegistry, logger }));
    const registration = (started.registration = new Registration(
      config,
      cluster.api,
      {
        caBundlePem: () => tls.current().caBundlePem,
        ...(urlBase !== undefined ? { urlBase } : {}),
        webhooks: (leaveOut) => handlers.desired(leaveOut),
        policyEntries: () => policy.current.policy.entries,
        entries: () => handlers.entries(),
        excludedNamespaces: () => policy.current.policy.excludedNamespaces,
        onServerVersion: (version) => compileFor(version, handlers.entries(), policy),
        policyModifiedAt: () => policy.current.modifiedAt,
        // A leader about to create a configuration is Ready first (once trusted): its endpoint may be the only one.
        serving: () => {
          started.ready = true;
          health.setReady(trust.ready);
        },
        ...(audit ? { leading: (signal: AbortSignal) => audit.runTerm(signal) } : {}),
      },
      logger,
      createRegistrationMetrics(metricsRegistry),
    ));
    tls.on('ca-bundle-change', () => registration.refresh('CA bundle changed'));
    const role = await registration.start(signal);
    logger.info({ role }, role === 'leader' ? 'registered as the leader' : 'serving as a follower');
  } else {
    const reason = config.clusterConfigured ? '--no-register' : 'no cluster configured';
    logger.info({ reason, try: sampleReviewCommand(config, port) }, 'registration skipped');
  }
  // Ready means kube-apiserver can verify what this replica serves (ServingTrust).
  await trust.untilReady(signal);
  started.ready = true;
  health.setReady(trust.ready);
  logger.info({ port, healthPort, webhooks: handlers.entries().map(webhookPath), registered: handlers.desired().map(webhookPath) }, 'ready');
  options.onReady?.({ port, healthPort });
}

/**
 * kube-apiserver's version is known: what the policy (and the custom webhooks) would register
 * must compile as that kube-apiserver compiles a written configuration, or the start fails here,
 * naming each webhook, rather than with a 422 at registration; later versions are compiled for it.
 */
function compileFor(version: KubernetesVersion, webhooks: readonly Webhook[], policy: PolicyReloader): void {
  policy.compileFor(version);
  const refused = matchConditionsRefusedBy(version, webhooks);
  if (refused.length > 0) throw new PolicyFileError(refused);
}

async function shutDown(config: Config, options: RunOptions, started: Started) {
  const { logger } = options;
  // At SIGTERM, before the delay: this starts reading the owner chain the teardown decides on.
  const teardown = started.registration?.teardownStep(options.stopSignal.aborted);
  return await shutdown(
    {
      beginShutdown: () => {
        started.health?.setShuttingDown();
        // Pooled connections from kube-apiserver wind down during the delay, one answer each.
        started.server?.stopKeepAlive();
        started.registration?.stopBackground();
      },
      ...(teardown ? { teardown } : {}),
      closeServer: async (budgetMs) => {
        started.health?.setClosing();
        if (!started.server) return { outcome: 'skipped' };
        const result = await started.server.close(budgetMs);
        return result.drained ? { outcome: 'ok' } : { outcome: 'timed-out', detail: `${result.destroyedSockets} sockets destroyed` };
      },
      ...(started.registration && !config.reachableAt ? { releaseLease: (signal: AbortSignal) => started.registration!.releaseLease(signal) } : {}),
      closeRest: async () => {
        try {
          await Promise.all([started.health?.close(500), started.tls?.stop(), started.clientCa?.stop(), started.policy?.stopped(), started.live?.stopped, started.namespaces?.stop(), ...started.loops]);
        } finally {
          // Last: the teardown, the lease release and the loops above made their API calls.
          started.cluster?.close();
          started.audit?.close();
        }
      },
    },
    {
      delayMs: started.ready ? config.shutdownDelayMs : 0,
      timeoutMs: config.shutdownTimeoutMs,
      graceAfterTeardownMs: PROPAGATION_GRACE_MS,
      logger,
      ...(options.abortShutdown ? { signal: options.abortShutdown } : {}),
    },
  );
}
