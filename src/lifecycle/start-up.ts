/**
 * The start of the server, as the named steps it takes in order: the cluster, the policy, the
 * entries served, health, TLS material, the webhook listener, the self-check, the policy watch,
 * then registration (or its skip) and Ready. What each step starts goes into `started`, which
 * the shutdown closes whatever step failed.
 */
import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Webhook } from '../admission/types.js';
import { matchConditionsRefusedBy } from '../cel/match-conditions.js';
import type { Config } from '../config/types.js';
import { servedPolicyWebhooks } from '../policy/engine.js';
import { entryDefinitions } from '../policy/entry-definition.js';
import { createHealthServer, type HealthServer } from '../server/health-server.js';
import { resolveListenHost } from '../server/listen-host.js';
import { createWebhookServer, type WebhookServer } from '../server/webhook-server.js';
import { GeneratedMaterialSource } from '../tls/generated-source.js';
import { createTlsMetrics } from '../tls/metrics.js';
import { serviceHostName } from '../tls/sans.js';
import type { ClientCaSource, ServingMaterial, TlsMaterialSource } from '../tls/types.js';
import type { KubernetesVersion } from '../util/kubernetes-version.js';
import { webhookPath } from '../webhooks/group-path.js';
import { WebhookRegistry } from '../webhooks/registry.js';
import { serverAuthorization, type ServerAuthorization } from './authorization.js';
import { connectToCluster, type ClusterConnection } from './cluster-connection.js';
import { fixedFieldsLogger } from './logger.js';
import { namespaceObjects, type NamespaceObjects } from './namespace-objects.js';
import { servedAudit, type ServedAudit } from './background-audit.js';
import { PolicyFileError } from '../policy/policy-file.js';
import { loadPolicyOrThrow, PolicyReloader, type LoadedPolicy } from './policy-reloader.js';
import { PROPAGATION_GRACE_MS } from '../registration/propagation-grace.js';
import type { Registration } from '../registration/registration.js';
import { followGeneratedSecret } from './secret-watch.js';
import { runSelfCheck, verifyWithEach } from './self-check.js';
import { ServedHandlers } from './served-handlers.js';
import { ServingTrust } from './serving-trust.js';
import { SkewJudge } from '../registration/skew-judge.js';
import { startLiveView, type LiveView } from '../registration/live-view.js';
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
export interface Started {
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

/** What every step reads: the configuration, the process's signal, its logger and metrics, and what has started. */
export interface Start {
  config: Config;
  options: RunOptions;
  started: Started;
  signal: AbortSignal;
  logger: Logger;
  metricsRegistry: Registry;
}

export async function startUp(start: Start): Promise<void> {
  const cluster = (start.started.cluster = await connectToCluster(start.config));
  const policy = await readPolicy(start, cluster);
  const entries = await serveEntries(start, cluster, policy);
  const health = await listenForHealth(start, entries.host);
  const tls = await loadServingMaterial(start, cluster);
  const listener = await listenForReviews(start, entries, tls);
  await checkItself(start, entries, listener);
  const reloader = watchPolicyFile(start, entries, policy);
  // Before registering: kube-apiserver must not call a replica that cannot read namespaceObject yet.
  await entries.namespaces.ready(start.signal);
  await registerOrSkip(start, cluster, { entries, tls, listener, reloader, health });
  await becomeReady(start, entries, listener, health);
}

/** The policy file as first read, with who answers its `authorizer` checks. */
interface FirstPolicy {
  loaded: LoadedPolicy;
  authorization: ServerAuthorization;
  kubernetesVersion: KubernetesVersion | undefined;
}

async function readPolicy({ config, logger, signal }: Start, cluster: ClusterConnection | undefined): Promise<FirstPolicy> {
  const authorization = await serverAuthorization(cluster, logger);
  const loaded = await loadPolicyOrThrow(config.policyFile, {
    ownNamespace: config.namespace,
    ...(config.kubernetesVersion ? { kubernetesVersion: config.kubernetesVersion } : {}),
    ...(authorization.source ? { authorization: authorization.source } : {}),
  });
  await authorization.check(loaded.webhooks, signal);
  return { loaded, authorization, kubernetesVersion: config.kubernetesVersion };
}

/** What this replica serves: the registry the listener reads, the handlers in it, the live view and the Namespaces. */
interface Entries {
  registry: WebhookRegistry;
  handlers: ServedHandlers;
  namespaces: NamespaceObjects;
  host: string;
  /** The dev loop's URL, once the listener has its port. */
  urlBase: string | undefined;
}

async function serveEntries(start: Start, cluster: ClusterConnection | undefined, policy: FirstPolicy): Promise<Entries> {
  const { config, started, logger, signal, options } = start;
  const registry = new WebhookRegistry();
  // Every replica that registers follows the live configurations: what they trust and route to.
  const entries = { registry, urlBase: undefined } as Entries;
  const live = (started.live = config.register && cluster ? await startLiveView(config, cluster.api, logger, signal, () => entries.urlBase) : undefined);
  const { policy: initial, webhooks } = policy.loaded;
  entries.handlers = new ServedHandlers(
    { registry, customWebhooks: options.customWebhooks ?? [], routedPaths: live?.routedPaths, retainMs: config.entryOverlapMs, signal, logger },
    servedPolicyWebhooks(initial, webhooks),
    initial.grouping,
    entryDefinitions(initial.entries),
  );
  entries.namespaces = started.namespaces = await namespaceObjects({ registry, kubeConfig: cluster?.api.kubeConfig, logger, signal });
  const { host, fellBackBecause } = await resolveListenHost(config.host);
  if (fellBackBecause) logger.warn({ wanted: config.host, host, error: fellBackBecause }, 'this host has no IPv6; listening on IPv4 addresses only');
  entries.host = host;
  return entries;
}

interface Health {
  server: HealthServer;
  port: number;
}

/**
 * Up (and not Ready) before the first wait on the API: generate mode's Secret may take a while
 * (429s, an apiserver restart), and a startupProbe must see a live process meanwhile.
 */
async function listenForHealth({ config, started, logger, metricsRegistry }: Start, host: string): Promise<Health> {
  const server = createHealthServer({ host, port: config.healthPort, metricsRegistry, logger });
  const { port } = await server.listen();
  started.health = server;
  return { server, port };
}

/** The serving material and the client CA. */
interface Material {
  tls: TlsMaterialSource;
  serving: ServingMaterial;
  clientCaPem: string | undefined;
}

async function loadServingMaterial({ config, started, logger, signal, metricsRegistry }: Start, cluster: ClusterConnection | undefined): Promise<Material> {
  // The dev loop keeps its material in --cert-dir (as a server without a cluster does): it writes no Secret.
  const tls = (started.tls = createTlsSource(config, config.reachableAt ? undefined : cluster, logger, createTlsMetrics(metricsRegistry)));
  // Served from here on, written (generate mode) only once everything that can refuse the start has passed.
  const serving = await tls.load(signal, { holdWrites: true });
  const clientCa = (started.clientCa = createClientCa(config, logger, createTlsMetrics(metricsRegistry)));
  const clientCaPem = clientCa ? await clientCa.load(signal) : undefined;
  return { tls, serving, clientCaPem };
}

/** The webhook listener and what decides which chain it serves (kube-apiserver must be able to verify it). */
interface Listener {
  server: WebhookServer;
  port: number;
  /** The name kube-apiserver verifies: the Service's, or the host of the dev loop's URL. */
  serverName: string;
  trust: ServingTrust;
}

async function listenForReviews(start: Start, entries: Entries, material: Material): Promise<Listener> {
  const { config, started, logger, signal, metricsRegistry } = start;
  const server = createWebhookServer({
    registry: entries.registry,
    tls: { certPem: material.serving.certPem, keyPem: material.serving.keyPem, clientCaPem: material.clientCaPem },
    host: entries.host,
    port: config.port,
    logger: fixedFieldsLogger(logger, { component: 'admission' }),
    // Handlers log what they like: their lines keep the key material redaction.
    handlerLogger: logger.child({ component: 'handler' }),
    metricsRegistry,
    ...unknownEntriesJudge(start, entries),
    namespaces: entries.namespaces.source,
  });
  const { port } = await server.listen();
  started.server = server;
  const serverName = config.reachableAt?.host ?? serviceHostName(config.serviceName, config.namespace);
  if (config.reachableAt) entries.urlBase = reachableUrlBase(config.reachableAt.host, config.reachableAt.port ?? port);
  const trust = new ServingTrust(
    {
      serve: (next) => server.updateCertificate(next),
      verify: (bundles, verifySignal) => verifyWithEach({ host: config.host, port, serverName }, bundles, verifySignal),
      graceMs: PROPAGATION_GRACE_MS,
      logger: logger.child({ component: 'serving-trust' }),
    },
    material.serving,
  );
  material.tls.on('serving-change', (next) => trust.offer(next));
  trust.on('readiness', (ready) => {
    if (started.ready) started.health?.setReady(ready);
  });
  started.loops.push(trust.run(started.live?.live, signal));
  started.clientCa?.on('client-ca-change', (pem) => server.updateClientCa(pem));
  started.clientCa?.start(signal);
  return { server, port, serverName, trust };
}

/** A replica that follows the live configurations can tell an entry a newer policy added from one an older had. */
function unknownEntriesJudge({ config, started }: Start, entries: Entries): { unknownEntries?: SkewJudge } {
  const live = started.live;
  if (!live) return {};
  const service = { name: config.serviceName, namespace: config.namespace };
  return { unknownEntries: new SkewJudge({ snapshot: () => live.live.snapshot, service, withDefinition: (type, definition) => entries.handlers.withDefinition(type, definition) }) };
}

/** `https://host:port` (IPv6 literals bracketed) that kube-apiserver dials in the dev loop. */
function reachableUrlBase(host: string, port: number): string {
  return `https://${isIPv6(host) ? `[${host}]` : host}:${port}`;
}

/** TLS to the own listener as kube-apiserver will connect, verified against the bundle to be registered, and a review answered. */
async function checkItself({ config, logger, signal, started }: Start, entries: Entries, listener: Listener): Promise<void> {
  const firstWebhook = entries.handlers.desired()[0];
  const selfCheck = await runSelfCheck({
    host: entries.host,
    port: listener.port,
    serverName: listener.serverName,
    caBundlePem: listener.trust.served.caBundlePem,
    path: started.clientCa || !firstWebhook ? undefined : webhookPath(firstWebhook),
    namespace: config.namespace,
    deadlineMs: config.selfCheckTimeoutMs,
    signal,
    logger,
  });
  logger.info(selfCheck, 'self-check passed');
}

/** New versions of the policy file (and of the dev loop's handlers) replace the served handlers and re-register. */
function watchPolicyFile({ config, options, started, logger, signal, metricsRegistry }: Start, entries: Entries, policy: FirstPolicy): PolicyReloader {
  const { handlers } = entries;
  options.onServing?.({
    replace: (webhooks) => {
      handlers.replaceCustom(webhooks);
      started.registration?.refresh('custom handlers changed');
      started.audit?.policyChanged();
    },
  });
  const { authorization } = policy;
  const reloader = (started.policy = new PolicyReloader(
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
    policy.loaded,
    policy.kubernetesVersion,
  ));
  reloader.start(signal);
  return reloader;
}

/** What registration reads of the rest of the start. */
interface Serving {
  entries: Entries;
  tls: Material;
  listener: Listener;
  reloader: PolicyReloader;
  health: Health;
}

/**
 * The first write comes only here: what could refuse the start was checked first (the leader's
 * writes as dry runs), and wrote nothing. Then the material is persisted and registration starts.
 */
async function registerOrSkip(start: Start, cluster: ClusterConnection | undefined, serving: Serving): Promise<void> {
  const { config, started, logger, signal } = start;
  const { tls } = serving.tls;
  const registration = config.register && cluster ? (started.registration = await createRegistration(start, cluster, serving)) : undefined;
  await registration?.check(signal);
  await tls.persist(signal);
  tls.start(signal);
  if (cluster && tls instanceof GeneratedMaterialSource) started.loops.push(followGeneratedSecret(config, cluster.api, tls, logger.child({ component: 'tls' }), signal));
  if (!registration) {
    const reason = config.clusterConfigured ? '--no-register' : 'no cluster configured';
    logger.info({ reason, try: sampleReviewCommand(config, serving.listener.port) }, 'registration skipped');
    return;
  }
  tls.on('ca-bundle-change', () => registration.refresh('CA bundle changed'));
  const role = await registration.start(signal);
  logger.info({ role }, role === 'leader' ? 'registered as the leader' : 'serving as a follower');
}

/** The leader-elected registration of this replica (loaded only where it registers). */
async function createRegistration({ config, started, logger, metricsRegistry }: Start, cluster: ClusterConnection, serving: Serving): Promise<Registration> {
  const { entries, tls, listener, reloader, health } = serving;
  const { handlers } = entries;
  const [{ Registration }, { createRegistrationMetrics }] = await Promise.all([import('../registration/registration.js'), import('../registration/registration-metrics.js')]);
  const audit = (started.audit = await servedAudit({ config, policy: reloader, customWebhooks: () => handlers.custom, registry: metricsRegistry, logger }));
  const parts = {
    caBundlePem: () => tls.tls.current().caBundlePem,
    ...(entries.urlBase !== undefined ? { urlBase: entries.urlBase } : {}),
    webhooks: (leaveOut?: ReadonlySet<string>) => handlers.desired(leaveOut),
    policyEntries: () => reloader.current.policy.entries,
    entries: () => handlers.entries(),
    entryDefinitions: () => handlers.definitions(),
    excludedNamespaces: () => reloader.current.policy.excludedNamespaces,
    onServerVersion: (version: KubernetesVersion) => compileFor(version, handlers.entries(), reloader),
    policyModifiedAt: () => reloader.current.modifiedAt,
    // A leader about to create a configuration is Ready first (once trusted): its endpoint may be the only one.
    serving: () => {
      started.ready = true;
      health.server.setReady(listener.trust.ready);
    },
    ...(audit ? { leading: (signal: AbortSignal) => audit.runTerm(signal) } : {}),
  };
  return new Registration(config, cluster.api, parts, logger, createRegistrationMetrics(metricsRegistry));
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

/** Ready means kube-apiserver can verify what this replica serves (ServingTrust). */
async function becomeReady({ options, started, logger, signal }: Start, entries: Entries, listener: Listener, health: Health): Promise<void> {
  await listener.trust.untilReady(signal);
  started.ready = true;
  health.server.setReady(listener.trust.ready);
  const { handlers } = entries;
  const healthPort = health.port;
  logger.info({ port: listener.port, healthPort, webhooks: handlers.entries().map(webhookPath), registered: handlers.desired().map(webhookPath) }, 'ready');
  options.onReady?.({ port: listener.port, healthPort });
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
