import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseKubernetesVersion } from '../util/kubernetes-version.js';
import { parseCommandLine } from './command-line.js';
import { readsServerFlag, type AnyCommandSpec } from './command-spec.js';
import { FLAGS, type FlagName } from './flags.js';
import type { Config, LogFormat, LogLevel, ReportsApi, ReportsMode, TeardownPolicy, TlsMode } from './types.js';
import { validateFlagValue, type ParsedValue } from './validate-value.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/**
 * The namespace manifests/ and the chart install into. evaluate, test and audit answer for the
 * installed server, so outside a pod it is their own namespace (never intercepted): with `default`
 * a Pod in `default`, the namespace most tried objects land in, would be reported as not intercepted.
 */
export const INSTALL_NAMESPACE = 'kube-admission-server';
/** The bundled example policy: --policy-file's default for `serve`. */
export const BUNDLED_POLICY_FILE = bundledPolicy('example.yaml');
/** The policy with no rules: the default of the dev loop and of programs on the library. */
export const HANDLERS_ONLY_POLICY_FILE = bundledPolicy('handlers-only.yaml');

/** A bundled policy, found relative to this file in src/ and in dist/src/. */
function bundledPolicy(name: string): string {
  return fileURLToPath(new URL(`../../policies/${name}`, import.meta.url)).replace(/\/dist\/policies\//, '/policies/');
}

/** What the process should do, or every problem with how it was asked. */
export type LoadConfigResult<S extends AnyCommandSpec = AnyCommandSpec> =
  | { kind: 'help'; text: string }
  | {
      kind: 'run';
      /** The command's name (`serve` when none was given). */
      command: string;
      /** The command, as given in the list loadConfig read the line against. */
      spec: S;
      config: Config;
      /** The command's own options, of the type its spec parses. */
      options: unknown;
    }
  | { kind: 'invalid'; problems: string[] };

/** Where the environment is read from; tests replace it. */
export interface EnvironmentProbe {
  /** The environment variables. */
  env: NodeJS.ProcessEnv;
  /** A file's text, or undefined when it cannot be read (the service-account files). */
  readFile(path: string): string | undefined;
  /** Whether a path exists (the service-account token). */
  exists(path: string): boolean;
  /** The host name: the pod's name in a cluster. */
  hostname(): string;
}

export const processEnvironment: EnvironmentProbe = {
  env: process.env,
  readFile: (path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  },
  exists: existsSync,
  hostname,
};

function readFlagValues(spec: AnyCommandSpec, given: ReadonlyMap<FlagName, string | boolean>, probe: EnvironmentProbe) {
  const values = new Map<FlagName, ParsedValue>();
  const problems: string[] = [];
  for (const flag of FLAGS) {
    if (!readsServerFlag(spec, flag.name)) continue;
    const fromFlag = given.get(flag.name);
    if (typeof fromFlag === 'boolean') {
      values.set(flag.name, fromFlag);
      continue;
    }
    const fromEnv = probe.env[flag.env];
    const raw = fromFlag ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined);
    if (raw === undefined) continue;
    const result = validateFlagValue(flag, raw);
    if (result.ok) values.set(flag.name, result.value);
    else problems.push(`--${flag.name}${fromFlag === undefined ? ` (from ${flag.env})` : ''}: "${raw}" ${result.problem}`);
  }
  return { values, problems };
}

function crossFieldProblems(config: Config, command: string): string[] {
  const problems: string[] = [];
  if (command === 'serve' && config.clusterConfigured && config.kubernetesVersion) {
    problems.push('--kubernetes-version is for render, evaluate, test and a server without a cluster: a server with a cluster compiles matchConditions for the version the cluster reports; leave it out');
  }
  if (config.port === config.healthPort && config.port !== 0) problems.push(`--port and --health-port are both ${config.port}; give them different ports`);
  if (config.leaseRenewDeadlineMs >= config.leaseDurationMs) {
    problems.push(
      `--lease-renew-deadline must be shorter than --lease-duration (now ${config.leaseRenewDeadlineMs} ms and ${config.leaseDurationMs} ms): a leader that cannot renew steps down at the renew deadline, and it must do so before a standby may take the Lease`,
    );
  }
  if (config.leaseRetryPeriodMs >= config.leaseRenewDeadlineMs) problems.push('--lease-retry-period must be shorter than --lease-renew-deadline');
  if (config.shutdownTimeoutMs < 1000) problems.push('--shutdown-timeout must be at least 1s: DELETEs get the deadline minus one second for draining');
  if (config.leafValidityDays <= config.leafRenewBeforeDays) problems.push('--leaf-validity must be longer than --leaf-renew-before');
  if (config.caValidityDays <= config.caRenewBeforeDays) problems.push('--ca-validity must be longer than --ca-renew-before');
  if (config.caValidityDays <= config.leafValidityDays) problems.push('--ca-validity must be longer than --leaf-validity: a leaf never outlives its CA');
  if (config.register && !config.clusterConfigured) problems.push('--register needs a cluster: set --kubeconfig (or KUBECONFIG), or run in a pod');
  if ((command === 'serve' || command === 'dev') && config.reports !== 'off' && !config.register) problems.push(`--reports ${config.reports} needs registration (a cluster, without --no-register): the leader of the replicas that register runs the background audit`);
  return problems;
}

/** What the environment says about where the process runs: in a pod, with which cluster. */
function whereItRuns(values: ReadonlyMap<FlagName, ParsedValue>, probe: EnvironmentProbe) {
  const kubeconfig = values.get('kubeconfig') as string | undefined;
  const inContainer = probe.env['KUBERNETES_SERVICE_HOST'] !== undefined;
  const inCluster = kubeconfig === undefined && inContainer && probe.exists(`${SERVICE_ACCOUNT_DIR}/token`);
  return {
    kubeconfig,
    inCluster,
    clusterConfigured: kubeconfig !== undefined || inCluster,
    inPod: inContainer || values.has('pod-name'),
    inContainer,
    serviceAccountNamespace: probe.readFile(`${SERVICE_ACCOUNT_DIR}/namespace`)?.trim(),
  };
}

/**
 * Turns the command line and environment into the command to run and one validated Config (or
 * every problem with them), reading the line against `commands` (src/commands/ lists them; it
 * must include `serve`, the command of a line that names none).
 */
export function loadConfig<S extends AnyCommandSpec>(argv: readonly string[], probe: EnvironmentProbe, commands: readonly S[]): LoadConfigResult<S> {
  const line = parseCommandLine(argv, commands);
  if (line.kind !== 'command') return line;
  const spec = line.spec as S;
  const { values, problems } = readFlagValues(spec, line.flagValues, probe);
  problems.unshift(...line.problems);

  const get = <T extends ParsedValue>(name: FlagName, fallback: T): T => (values.get(name) as T | undefined) ?? fallback;
  const { kubeconfig, inCluster, clusterConfigured, inPod, inContainer, serviceAccountNamespace } = whereItRuns(values, probe);
  const serviceName = get('service-name', 'kube-admission-server');

  const config: Config = {
    port: get('port', 8443),
    healthPort: get('health-port', 8080),
    // In a container the kubelet started, every address of the pod (kube-apiserver and the probes
    // dial the pod IP, of whichever family the cluster gives; `::` takes IPv4 too, and falls back to
    // 0.0.0.0 where the kernel has no IPv6); anywhere else, loopback only.
    host: get('host', inContainer ? '::' : spec.servesClusterFromOutside ? '0.0.0.0' : '127.0.0.1'),
    serviceName,
    namespace: get('namespace', serviceAccountNamespace || (spec.answersForInstall ? INSTALL_NAMESPACE : 'default')),
    podName: get('pod-name', probe.hostname().toLowerCase()),
    configName: get('config-name', 'kube-admission-server'),
    tlsMode: get<string>('tls-mode', 'generate') as TlsMode,
    certDir: resolve(get('cert-dir', './certs')),
    certDirWritable: !spec.writesCertDirOnlyWhenGiven || values.has('cert-dir'),
    extraSans: get<string[]>('extra-san', []),
    clientCaFile: values.get('client-ca') as string | undefined,
    policyFile: resolve(get('policy-file', spec.servesOwnHandlers ? HANDLERS_ONLY_POLICY_FILE : BUNDLED_POLICY_FILE)),
    kubernetesVersion: parseKubernetesVersion(get('kubernetes-version', '')),
    kubeconfig,
    inCluster,
    inPod,
    clusterConfigured,
    register: get('register', clusterConfigured),
    teardown: get<string>('teardown', 'auto') as TeardownPolicy,
    ownerClusterRole: values.get('owner-cluster-role') as string | undefined,
    shutdownTimeoutMs: get('shutdown-timeout', 5000),
    shutdownDelayMs: get('shutdown-delay', 0),
    selfCheckTimeoutMs: get('self-check-timeout', 30_000),
    leaseName: `${serviceName}-leader`,
    leaseDurationMs: get('lease-duration', 15_000),
    leaseRenewDeadlineMs: get('lease-renew-deadline', 10_000),
    leaseRetryPeriodMs: get('lease-retry-period', 2000),
    resyncPeriodMs: get('resync-period', 60_000),
    caValidityDays: get('ca-validity', 1825),
    leafValidityDays: get('leaf-validity', 365),
    leafRenewBeforeDays: get('leaf-renew-before', 30),
    caRenewBeforeDays: get('ca-renew-before', 90),
    caOverlapMs: get('ca-overlap', 3_600_000),
    entryOverlapMs: get('entry-overlap', 15 * 60_000),
    watchPollIntervalMs: get('watch-poll-interval', 10_000),
    reports: get<string>('reports', 'off') as ReportsMode,
    reportsApi: get<string>('reports-api', 'openreports') as ReportsApi,
    reportsEvents: get('reports-events', false),
    reportsMaxBytes: get('reports-max-bytes', 98_304),
    logLevel: get<string>('log-level', 'info') as LogLevel,
    logFormat: get<string>('log-format', 'json') as LogFormat,
  };
  if (problems.length === 0) problems.push(...crossFieldProblems(config, spec.name));
  if (problems.length > 0) return { kind: 'invalid', problems };
  return { kind: 'run', command: spec.name, spec, config, options: line.options };
}
