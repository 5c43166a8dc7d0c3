import { dirname, resolve } from 'node:path';
import type { CommandFlag } from '../config/command-spec.js';
import type { Config } from '../config/types.js';
import { EXIT_INVALID_CONFIG } from '../lifecycle/exit-codes.js';
import { defineCommand } from './command.js';
import { defaultDevSuffix, parseReachableAt } from './dev-names.js';
import { prewarmKeysFor } from './serve.js';

/** What dev is told besides the server flags. */
interface DevOptions {
  handlers: string[];
  reachableAt: { host: string; port: number | undefined } | undefined;
  suffix: string;
}

const DEV_FLAGS: readonly CommandFlag<DevOptions>[] = [
  { names: ['--handlers'], value: 'MODULE', description: 'the compiled module exporting your webhooks (`webhooks` or the default export; repeatable); its folder is watched', apply: (o, v) => void o.handlers.push(v) },
  {
    names: ['--reachable-at'],
    value: 'HOST[:PORT]',
    description: 'the address the cluster dials to reach this machine: host.docker.internal (Docker Desktop, kind), host.k3d.internal (k3d), 127.0.0.1 (this repository\'s local cluster); PORT defaults to --port',
    apply: (o, v) => {
      const parsed = parseReachableAt(v);
      if (typeof parsed === 'string') return parsed;
      o.reachableAt = parsed;
      return undefined;
    },
  },
  {
    names: ['--name-suffix'],
    value: 'SUFFIX',
    description: 'appended to --config-name, so the dev configurations never collide with an installed server (default dev-<user or host>)',
    apply: (o, v) => (/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(v) ? void (o.suffix = v) : `"${v}" is not a DNS label (lower-case letters, digits and "-")`),
  },
];

/** The server's configuration for the dev loop: its own names, URL registration, and it always deletes what it registered. */
function devConfig(config: Config, options: DevOptions & { reachableAt: NonNullable<DevOptions['reachableAt']> }): Config {
  return {
    ...config,
    configName: `${config.configName}-${options.suffix}`,
    reachableAt: options.reachableAt,
    register: true,
    teardown: 'always',
    extraSans: [...config.extraSans, options.reachableAt.host],
  };
}

/** Your handlers on your machine, called by a cluster, reloaded on change, unregistered on exit. */
export const dev = defineCommand<DevOptions>({
  name: 'dev',
  summary: 'run your handlers on this machine against a cluster: registered by URL, reloaded on change, removed on exit',
  usage: ['kube-admission-server dev --handlers MODULE --reachable-at HOST[:PORT] --kubeconfig FILE [flags]'],
  description: [
    'Serves the webhooks of --handlers (and of --policy-file, none by default) from this process and',
    'registers them in the cluster of --kubeconfig with clientConfig.url = https://<reachable-at>/...,',
    'named <config-name>-dev-<user>, after the self-check proved that URL\'s name and the caBundle',
    '(certificates in --cert-dir, covering the reachable host). When a file in the module\'s folder',
    'changes, the module is imported anew and served; until then, and when it fails to load, the',
    'previous handlers answer. Run it under `node --inspect` to debug. On Ctrl-C (even twice) or',
    'SIGTERM it deletes both configurations within --shutdown-timeout. --host defaults to 0.0.0.0.',
    'Exit codes: 0 stopped and unregistered, 1 failure, 2 invalid flags or handler module.',
  ].join('\n'),
  flags: DEV_FLAGS,
  serverFlags: [
    'port', 'health-port', 'host', 'service-name', 'namespace', 'config-name', 'tls-mode', 'cert-dir', 'extra-san', 'client-ca', 'policy-file',
    'kubernetes-version', 'kubeconfig', 'shutdown-timeout', 'self-check-timeout', 'resync-period', 'ca-overlap', 'watch-poll-interval', 'log-level', 'log-format',
  ],
  answersForInstall: true,
  servesClusterFromOutside: true,
  servesOwnHandlers: true,
  examples: [
    { command: 'kube-admission-server dev --handlers dist/src/webhooks.js --reachable-at host.docker.internal --kubeconfig ~/.kube/config', comment: 'kind or Docker Desktop; run `tsc --watch` beside it' },
    { command: 'node --inspect node_modules/.bin/kube-admission-server dev --handlers dist/src/webhooks.js --reachable-at host.k3d.internal', comment: 'k3d, with the debugger' },
  ],
  defaults: () => ({ handlers: [], reachableAt: undefined, suffix: defaultDevSuffix() }),
  positionals: (options, args) => {
    const problems = args.length > 0 ? [`"${args.join(' ')}": unexpected arguments`] : [];
    if (options.handlers.length === 0) problems.push('--handlers: required: the compiled module exporting your webhooks (e.g. --handlers dist/src/webhooks.js)');
    if (!options.reachableAt) problems.push('--reachable-at: required: the address the cluster reaches this machine at (host.docker.internal for kind and Docker Desktop, host.k3d.internal for k3d, 127.0.0.1 for the local cluster)');
    return problems;
  },
  run: async ({ config, options, io, startProcess }) => {
    const reachableAt = options.reachableAt!;
    if (!config.clusterConfigured) {
      io.stderr('kube-admission-server: dev needs a cluster: set --kubeconfig (or KUBECONFIG)\n');
      return EXIT_INVALID_CONFIG;
    }
    const served = devConfig(config, { ...options, reachableAt });
    prewarmKeysFor(served);
    const [{ runServer }, { loadHandlerModules }, { freshImportsUnder }, { reloadOnChange }, services] = await Promise.all([
      import('../lifecycle/run-server.js'),
      import('../tools/handler-modules.js'),
      import('../tools/fresh-imports.js'),
      import('../tools/handler-reload.js'),
      startProcess('stdout', { second: 'finish-teardown', hardDeadlineMs: served.shutdownTimeoutMs + 2000 }),
    ]);
    const roots = [...new Set(options.handlers.map((path) => dirname(resolve(path))))];
    freshImportsUnder(roots);
    const load = (generation: number) => loadHandlerModules(options.handlers, { generation });
    let customWebhooks: Awaited<ReturnType<typeof load>>;
    try {
      customWebhooks = await load(0);
    } catch (error) {
      io.stderr(`kube-admission-server: ${(error as Error).message}\n`);
      return EXIT_INVALID_CONFIG;
    }
    const { logger, stopSignal } = services;
    let reloading: Promise<void> | undefined;
    // No abortShutdown: a second Ctrl-C must not cut the deletion short (main.ts bounds it instead).
    const code = await runServer(served, {
      stopSignal,
      logger,
      customWebhooks,
      onServing: (custom) => {
        const reloadLogger = logger.child({ component: 'dev-reload' });
        reloading = reloadOnChange({ roots, load, replace: (webhooks) => custom.replace(webhooks), pollIntervalMs: Math.min(served.watchPollIntervalMs, 2000), signal: stopSignal, logger: reloadLogger }).catch(
          (error: unknown) => reloadLogger.error({ error: error instanceof Error ? error.message : String(error) }, 'watching the handler modules stopped; changes are no longer served'),
        );
      },
    });
    await reloading;
    return code;
  },
});
