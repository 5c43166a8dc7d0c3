/**
 * Start-up to registered (issue 26): the server as a child process against the Kubernetes API
 * test double, spawn -> both configurations created, on a first start (the CA generated and
 * persisted in a Secret) and on starts that find the CA in the Secret. Three ways of running the
 * same compiled code, each against its own double of the same kind: the tsc output as `npm start`
 * runs it, the same with Node's module compile cache, and the image's entry (the one-file bundle
 * of scripts/bundle-server.mjs with its compile cache filled beforehand, as the Dockerfile does).
 * Each start also reports the CPU time its process used (less sensitive than wall time to other
 * load on a shared machine) and where the wall time went, read from the API requests and log lines.
 *
 * Two kinds of start with the CA in the Secret, medians of each: a first registration (no
 * configuration exists: the leader creates both, after the EndpointGate's wait for a ready endpoint
 * and kube-proxy) and a restart (both configurations left by a previous run of the same policy:
 * the leader reads them, finds them as wanted and writes nothing, so no gate). The issue-26 target
 * (400 ms) is judged on the restart, the usual start of a replica whose install already exists.
 * A restart is also timed to Ready (500 ms target): its configurations were registered longer
 * than the propagation grace before, which the API's managedFields and Date show.
 *
 * First starts (a fresh install: the CA generated, both configurations created), medians too. The
 * first-start target (600 ms) is judged on the server's own time, less the EndpointGate's wait: that
 * wait (a ready endpoint of the Service, then the time kube-proxy is given to program it) is the
 * cluster's, a guard the server must keep, and no start of the server can make it shorter.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listRounded, median } from './stats.js';
import { CleanupList } from './lifecycle.js';
import { ClusterHarness } from '../test/support/kube/cluster-harness.js';
import { MAIN_JS } from '../test/support/server/child-server.js';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import { runCommand } from '../test/support/tools/run-command.js';

export const STARTUP_TARGETS = { caInSecretMs: 400, firstStartMs: 600, restartReadyMs: 500 };
/** The propagation grace (3 s) and the server's margins for whole-second stamps and clock skew (2 s), with room. */
const SETTLED_MS = 6000;
const BUNDLE_JS = join(repositoryRoot(), 'dist', 'bundle', 'main.js');

export interface StartupPhases {
  /** Spawn -> the first API request (Node's start, imports, configuration). */
  firstRequestMs: number;
  /** -> the last Secret read or write answered (the CA read, or generated and persisted); the Secret's watch left out. */
  tlsReadyMs: number;
  /** -> the webhook server listens. */
  listeningMs: number;
  /** -> the self-check passed. */
  selfCheckedMs: number;
  /** -> this replica leads. */
  leaderMs: number;
  /**
   * -> the EndpointGate began waiting (a replica in a pod creating a configuration that does not
   * exist waits for a ready endpoint of its Service, then ENDPOINT_PROPAGATION_MS for kube-proxy).
   */
  gateMs: number;
  /** How long the EndpointGate held the creates back: until a ready endpoint showed, plus the propagation time it then slept (0 on a restart). */
  gateWaitMs: number;
  /** -> both configurations created (a first registration) or read and found as wanted (a restart: the leader's log line). */
  registeredMs: number;
  /** TLS connections the start opened to the API (the double numbers them), watches included. */
  connections: number;
  /** -> Ready (the `ready` line: the live caBundles trust the served chain, for the propagation grace or longer). */
  readyMs: number;
}

export interface StartupVariantResult {
  label: string;
  /** First starts: no CA in the Secret (it is generated and persisted) and no configuration (both created, after the EndpointGate). */
  firstStart: (StartupPhases & { cpuMs: number })[];
  caInSecret: (StartupPhases & { cpuMs: number })[];
  /** Restarts: the CA in the Secret and both configurations already registered by the previous run. */
  restart: (StartupPhases & { cpuMs: number })[];
}

/** User plus system CPU time of a process so far, all its threads (/proc/PID/stat, clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const logAt = (logs: readonly { msg: string; time: string }[], msg: string, wallAtSpawn: number): number => {
  const line = logs.find((l) => l.msg === msg);
  if (!line) throw new Error(`no "${msg}" log line`);
  return Date.parse(line.time) - wallAtSpawn;
};

/**
 * 'first': nothing exists (a fresh install): the CA is generated, and the start's Secret and
 * configurations are deleted after it, so the next one starts from nothing again; 'create': no
 * configuration exists, and the start's are deleted after it, so the next one creates them again;
 * 'create-and-keep': the same, its configurations left for the restarts; 'restart': the previous
 * start's configurations are there and stay.
 */
type StartKind = 'first' | 'create' | 'create-and-keep' | 'restart';

/** One start to registered, then SIGTERM. The Lease is deleted after each start whatever the kind (the next finds it free). */
async function oneStart(cluster: ClusterHarness, cleanups: CleanupList, entry: string, env: Record<string, string>, kind: StartKind = 'create'): Promise<StartupPhases & { cpuMs: number }> {
  const earlier = cluster.api.requests.length;
  const secretsBefore = new Set(cluster.api.store.list('secrets').map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`));
  const wallAtSpawn = Date.now();
  const spawnedAt = performance.now();
  const replica = await ClusterHarness.ready(cluster.spawnReplica(cleanups, 'kas-bench', [], env, entry));
  const cpu = cpuMs(replica.child.process.pid!);
  const requests = cluster.api.requests.slice(earlier).filter((r) => r.verb !== undefined);
  const creates = requests.filter((r) => r.verb === 'create' && r.status === 201 && r.resource?.endsWith('webhookconfigurations'));
  const logs = replica.child.logs;
  const secretCalls = requests.filter((r) => r.resource === 'secrets' && r.verb !== 'watch' && r.verb !== 'list');
  let gateMs = 0;
  let gateWaitMs = 0;
  let registeredMs: number;
  if (kind !== 'restart') {
    if (creates.length !== 2) throw new Error(`expected two configuration creates, saw ${creates.length}`);
    gateMs = logAt(logs, 'a webhook configuration is to be created: waiting for a ready endpoint of the Service first', wallAtSpawn);
    const endpointReady = logs.find((l) => l.msg === 'the Service has a ready endpoint; creating the webhook configuration');
    if (!endpointReady) throw new Error('no "the Service has a ready endpoint" log line');
    gateWaitMs = Date.parse(endpointReady.time) - wallAtSpawn + Number(endpointReady['propagationMs']) - gateMs;
    registeredMs = Math.max(...creates.map((r) => r.endedAt ?? r.startedAt)) - spawnedAt;
  } else {
    // A restart registers by reading: nothing is created, and the leader's log line says when both were found as wanted.
    if (creates.length !== 0) throw new Error(`a restart created ${creates.length} configurations: the previous run's were not there`);
    const registered = logs.find((l) => l.msg === 'webhook configurations registered');
    const outcomes = registered?.['outcomes'] as { mutating?: string; validating?: string } | undefined;
    if (outcomes?.mutating !== 'unchanged' || outcomes.validating !== 'unchanged') throw new Error(`a restart did not find both configurations as wanted: ${JSON.stringify(outcomes)}`);
    registeredMs = logAt(logs, 'webhook configurations registered', wallAtSpawn);
  }
  const phases = {
    firstRequestMs: Math.min(...requests.map((r) => r.startedAt)) - spawnedAt,
    // Secret calls after registered (a later re-read) are not part of the start.
    tlsReadyMs: Math.max(...secretCalls.filter((r) => r.startedAt - spawnedAt <= registeredMs).map((r) => r.endedAt ?? r.startedAt)) - spawnedAt,
    listeningMs: logAt(logs, 'webhook server listening', wallAtSpawn),
    selfCheckedMs: logAt(logs, 'self-check passed', wallAtSpawn),
    leaderMs: logAt(logs, 'became the leader', wallAtSpawn),
    gateMs,
    gateWaitMs,
    registeredMs,
    connections: new Set(requests.filter((r) => r.startedAt - spawnedAt <= registeredMs).map((r) => r.connection)).size,
    readyMs: logAt(logs, 'ready', wallAtSpawn),
    cpuMs: cpu,
  };
  const exit = await replica.child.stop('SIGTERM');
  if (exit.code !== 0) throw new Error(`shutdown exited ${exit.code}`);
  // A first registration's next start registers from nothing again; a restart's finds the configurations. The Secret with the CA stays.
  const left = kind === 'create' || kind === 'first' ? (['mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'leases'] as const) : (['leases'] as const);
  for (const resource of left) {
    for (const object of cluster.api.store.list(resource)) cluster.api.store.delete(resource, object.metadata?.namespace, object.metadata!.name!);
  }
  // A first start's next one is a fresh install again: the Secret it made (the CA) goes too.
  if (kind === 'first') {
    for (const secret of cluster.api.store.list('secrets')) {
      if (!secretsBefore.has(`${secret.metadata?.namespace}/${secret.metadata?.name}`)) cluster.api.store.delete('secrets', secret.metadata?.namespace, secret.metadata!.name!);
    }
  }
  return phases;
}

async function runVariant(label: string, entry: string, env: Record<string, string>, runs: number, log: (line: string) => void): Promise<StartupVariantResult> {
  const cleanups = new CleanupList();
  try {
    const cluster = await ClusterHarness.start(cleanups);
    cluster.seedDeployment(['kas-bench']);
    const firstStart = [];
    for (let run = 0; run < runs; run++) {
      log(`startup: ${label}, first start (CA generated, configurations created), run ${run + 1}/${runs}`);
      firstStart.push(await oneStart(cluster, cleanups, entry, env, run === runs - 1 ? 'create' : 'first'));
    }
    const caInSecret = [];
    for (let run = 0; run < runs; run++) {
      log(`startup: ${label}, CA in the Secret, creating the configurations, run ${run + 1}/${runs}`);
      caInSecret.push(await oneStart(cluster, cleanups, entry, env));
    }
    // Registered once more, left in place: every restart below finds them, registered longer ago
    // than the propagation grace and its margins (the usual restart; one sooner waits the rest).
    log(`startup: ${label}, registering the configurations the restarts find`);
    await oneStart(cluster, cleanups, entry, env, 'create-and-keep');
    await sleep(SETTLED_MS);
    const restart = [];
    for (let run = 0; run < runs; run++) {
      log(`startup: ${label}, restart (CA and configurations there), run ${run + 1}/${runs}`);
      restart.push(await oneStart(cluster, cleanups, entry, env, 'restart'));
    }
    return { label, firstStart, caInSecret, restart };
  } finally {
    await cleanups.run();
  }
}

export async function runStartupBench(log: (line: string) => void, runs = Number(process.env.BENCH_STARTUP_RUNS ?? 5)): Promise<StartupVariantResult[]> {
  log('startup: bundling the entry (npm run build:bundle)');
  await runCommand(process.execPath, [join(repositoryRoot(), 'scripts', 'bundle-server.mjs')], { cwd: repositoryRoot(), timeoutMs: 5 * 60_000 });
  const caches = await mkdtemp(join(tmpdir(), 'kas-compile-cache-'));
  try {
    const tscCache = join(caches, 'tsc');
    const bundleCache = join(caches, 'bundle');
    // As the Dockerfile does: one run fills the cache, every measured start reads it.
    await runCommand(process.execPath, [BUNDLE_JS, '--help'], { timeoutMs: 60_000, env: { ...process.env, NODE_COMPILE_CACHE: bundleCache } });
    const results = [];
    // A built checkout to compare with (its dist/bundle/main.js, from `npm run build` and
    // `npm run build:bundle` there): its image entry runs first, against the same kind of double.
    const baseline = process.env.BENCH_STARTUP_BASELINE;
    const baselineBundle = baseline && join(baseline, 'dist', 'bundle', 'main.js');
    const baselineCache = join(caches, 'baseline');
    if (baselineBundle) await runCommand(process.execPath, [baselineBundle, '--help'], { timeoutMs: 60_000, env: { ...process.env, NODE_COMPILE_CACHE: baselineCache } });
    // BENCH_STARTUP_ROUNDS=N: N rounds, each the baseline then this checkout, so both sides see the same spells of other load.
    const rounds = Number(process.env.BENCH_STARTUP_ROUNDS ?? 1);
    for (let round = 1; round <= rounds; round++) {
      const suffix = rounds > 1 ? `, round ${round}/${rounds}` : '';
      if (baselineBundle) results.push(await runVariant(`baseline ${baseline}: bundle + compile cache${suffix}`, baselineBundle, { NODE_COMPILE_CACHE: baselineCache }, runs, log));
      // BENCH_STARTUP_IMAGE_ONLY=1: the image's entry alone (the tsc rows take most of the time).
      if (!process.env.BENCH_STARTUP_IMAGE_ONLY) {
        results.push(await runVariant(`tsc output (npm start)${suffix}`, MAIN_JS, {}, runs, log));
        results.push(await runVariant(`tsc output + compile cache${suffix}`, MAIN_JS, { NODE_COMPILE_CACHE: tscCache }, runs, log));
      }
      results.push(await runVariant(`bundle + compile cache (the image)${suffix}`, BUNDLE_JS, { NODE_COMPILE_CACHE: bundleCache }, runs, log));
    }
    return results;
  } finally {
    await rm(caches, { recursive: true, force: true });
  }
}

const phaseColumns = (p: StartupPhases): string => [p.firstRequestMs, p.tlsReadyMs, p.listeningMs, p.selfCheckedMs, p.leaderMs, p.gateMs].map((v) => Math.round(v)).join(' / ');

export function startupReport(results: readonly StartupVariantResult[]): string {
  const medianPhases = (runs: readonly StartupPhases[]): StartupPhases => ({
    firstRequestMs: median(runs.map((r) => r.firstRequestMs)),
    tlsReadyMs: median(runs.map((r) => r.tlsReadyMs)),
    listeningMs: median(runs.map((r) => r.listeningMs)),
    selfCheckedMs: median(runs.map((r) => r.selfCheckedMs)),
    leaderMs: median(runs.map((r) => r.leaderMs)),
    gateMs: median(runs.map((r) => r.gateMs)),
    gateWaitMs: median(runs.map((r) => r.gateWaitMs)),
    registeredMs: median(runs.map((r) => r.registeredMs)),
    connections: median(runs.map((r) => r.connections)),
    readyMs: median(runs.map((r) => r.readyMs)),
  });
  const lines = [
    'Restart: the CA in the Secret and both configurations registered by the previous run (the leader reads them, finds them as wanted, writes nothing: no EndpointGate). Spawn -> the leader logged both registered; the issue-26 target (400 ms) is judged here; spawn -> Ready (the `ready` line) with the configurations registered more than the propagation grace before. Phases in ms after spawn, medians of the runs.',
    '',
    `| entry | restart: median ms (target <= ${STARTUP_TARGETS.caInSecretMs}) | all runs ms | spawn -> Ready: median ms (target <= ${STARTUP_TARGETS.restartReadyMs}) | all runs ms | CPU ms, median | all runs CPU ms | API connections to registered | first request / TLS / listening / self-check / leader | first request -> registered |`,
    '|---|---:|---|---:|---|---:|---|---:|---|---:|',
  ];
  for (const r of results) {
    const times = r.restart.map((s) => s.registeredMs);
    const phases = medianPhases(r.restart);
    const apiPart = median(r.restart.map((s) => s.registeredMs - s.firstRequestMs));
    const phaseList = [phases.firstRequestMs, phases.tlsReadyMs, phases.listeningMs, phases.selfCheckedMs, phases.leaderMs].map((v) => Math.round(v)).join(' / ');
    lines.push(
      `| ${r.label} | ${Math.round(median(times))} | ${listRounded(times)} | ${Math.round(phases.readyMs)} | ${listRounded(r.restart.map((s) => s.readyMs))} | ${Math.round(median(r.restart.map((s) => s.cpuMs)))} | ${listRounded(r.restart.map((s) => s.cpuMs))} | ${phases.connections} | ${phaseList} | ${Math.round(apiPart)} |`,
    );
  }
  lines.push(
    '',
    'First registration: spawn -> both configurations created, the compiled server against the API test double (a fresh double per row, the same kind for every row). Phases: ms after spawn of the first API request (Node start, imports, configuration), TLS material ready, webhook server listening, self-check passed, leader, EndpointGate began waiting (its wait, a ready endpoint then the kube-proxy propagation time, ends at registered); medians.',
    '',
    `| entry | first registration, CA in the Secret: median ms (target <= ${STARTUP_TARGETS.caInSecretMs}) | all runs ms | CPU ms, median | all runs CPU ms | API connections to registered | first request / TLS / listening / self-check / leader / gate | EndpointGate's wait ms | CA in the Secret, less the gate's wait | first request -> registered, less the gate's wait |`,
    '|---|---:|---|---:|---|---:|---|---:|---:|---:|',
  );
  for (const r of results) {
    const warm = r.caInSecret.map((s) => s.registeredMs);
    const phases = medianPhases(r.caInSecret);
    const lessGate = median(r.caInSecret.map((s) => s.registeredMs - s.gateWaitMs));
    // The API part of a start (what one connection per call costs): the first request to registered.
    const apiPart = median(r.caInSecret.map((s) => s.registeredMs - s.gateWaitMs - s.firstRequestMs));
    lines.push(
      `| ${r.label} | ${Math.round(median(warm))} | ${listRounded(warm)} | ${Math.round(median(r.caInSecret.map((s) => s.cpuMs)))} | ${listRounded(r.caInSecret.map((s) => s.cpuMs))} | ${phases.connections} | ${phaseColumns(phases)} | ${Math.round(phases.gateWaitMs)} | ${Math.round(lessGate)} | ${Math.round(apiPart)} |`,
    );
  }
  lines.push(
    '',
    "First start: a fresh install (no CA in the Secret: both keys generated, the CA and serving certificates issued and persisted; no configuration: both created after the EndpointGate), the Secret and configurations deleted after each run. The gate's wait is the cluster's time (a ready endpoint of the Service, then the time kube-proxy is given to program it); less it, the server's own time. Medians.",
    '',
    `| entry | first start: spawn -> both created, median ms | all runs ms | EndpointGate's wait ms | less the gate's wait: median ms (target <= ${STARTUP_TARGETS.firstStartMs}) | all runs ms | CPU ms, median | all runs CPU ms | first request / TLS / listening / self-check / leader / gate |`,
    '|---|---:|---|---:|---:|---|---:|---|---|',
  );
  for (const r of results) {
    const times = r.firstStart.map((s) => s.registeredMs);
    const lessGate = r.firstStart.map((s) => s.registeredMs - s.gateWaitMs);
    lines.push(
      `| ${r.label} | ${Math.round(median(times))} | ${listRounded(times)} | ${Math.round(median(r.firstStart.map((s) => s.gateWaitMs)))} | ${Math.round(median(lessGate))} | ${listRounded(lessGate)} | ${Math.round(median(r.firstStart.map((s) => s.cpuMs)))} | ${listRounded(r.firstStart.map((s) => s.cpuMs))} | ${phaseColumns(medianPhases(r.firstStart))} |`,
    );
  }
  const image = results.at(-1);
  if (image) {
    const restart = median(image.restart.map((s) => s.registeredMs));
    const warm = median(image.caInSecret.map((s) => s.registeredMs));
    const lessGate = median(image.caInSecret.map((s) => s.registeredMs - s.gateWaitMs));
    const first = median(image.firstStart.map((s) => s.registeredMs));
    const firstLessGate = median(image.firstStart.map((s) => s.registeredMs - s.gateWaitMs));
    const verdict = (ms: number, target: number): string => `${Math.round(ms)} ms, ${ms <= target ? 'met' : 'MISSED'}`;
    lines.push(
      '',
      `- the image's entry, restart (CA in the Secret, configurations registered; the target's case): ${verdict(restart, STARTUP_TARGETS.caInSecretMs)}; spawn -> Ready: ${verdict(median(image.restart.map((s) => s.readyMs)), STARTUP_TARGETS.restartReadyMs)}`,
      `- the image's entry, first registration with the CA in the Secret: ${verdict(warm, STARTUP_TARGETS.caInSecretMs)}; first start: ${verdict(first, STARTUP_TARGETS.firstStartMs)}`,
      `- the same less the EndpointGate's wait (the cluster's time; a start outside a pod has none): ${verdict(lessGate, STARTUP_TARGETS.caInSecretMs)}; first start (the server's time, the first-start target's measure): ${verdict(firstLessGate, STARTUP_TARGETS.firstStartMs)}`,
    );
  }
  return lines.join('\n');
}
