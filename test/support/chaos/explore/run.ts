/**
 * One chaos run: a local cluster in this process (three kube-apiservers, the controllers, the
 * kubelet running the compiled server, kube-proxy, the cert-manager stand-in), the shipped install
 * for the schedule's TLS mode, a steady admission load through every kube-apiserver, then the
 * schedule's steps until the time is up, the invariants checked all along, and an uninstall.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalCluster } from '../../../../local-cluster/cluster/index.js';
import { sleep } from '../../../../local-cluster/util/waits.js';
import { install, leftovers, renderManifests, uninstall } from './install.js';
import { CallJudge, type CallCounts } from './invariants/calls.js';
import { divergence } from './invariants/convergence.js';
import { Ledger, type Invariant, type Violation } from './invariants/ledger.js';
import { ProcessJudge, type ProcessFigures } from './invariants/processes.js';
import { LagMonitor } from './lag-monitor.js';
import { AdmissionLoad, type LoadCounts } from './load.js';
import type { OperationContext, Sizes } from './operations/context.js';
import { runOperation } from './operations/run-operation.js';
import { settledProblem, untilSettled } from './operations/workload.js';
import { PolicyHistory } from './policy-history.js';
import { Random } from './random.js';
import { drawSchedule, type Step } from './schedule.js';
import { LOAD_NAMESPACE, NS, World, type LogLine, type TlsMode } from './world.js';

export interface RunOptions {
  seed: number;
  /** Steps start until this much time has passed (the last one then finishes). */
  minutes: number;
  /** Stop after this many steps (default: as many as the time allows). */
  steps?: number;
  mode?: TlsMode;
  /** 1 explores with production durations; CI runs at a fraction. */
  scale: number;
  /** The kubelet rewrites a Pod's ConfigMap and Secret volumes up to this long after a change (drawn per Pod). */
  volumeSyncMaxMs: number;
  /** I3: the live configurations converge within this after every step. */
  convergenceBoundMs: number;
  /** Bound for each wait inside an operation. */
  waitMs: number;
  ratePerSecond: number;
  /** The kubelet's allowance for a slow machine (startup probe failureThreshold multiplier). */
  slowStart: number;
  log: (line: string) => void;
}

export interface StepResult {
  index: number;
  operations: string[];
  ms: number;
  /** From the end of the step's operations to converged; undefined when not within the bound. */
  convergedAfterMs?: number;
}

export interface RunResult {
  seed: number;
  mode: TlsMode;
  minutes: number;
  scale: number;
  wallMs: number;
  steps: StepResult[];
  operations: number;
  policyVersions: number;
  load: LoadCounts;
  calls: CallCounts;
  processes: ProcessFigures;
  violations: Record<Invariant, number>;
  firstViolations: Violation[];
  log: LogLine[];
  /** What the uninstall left, and which of it is main's known behaviour (issue 22 item 12). */
  uninstallLeftovers: string[];
  /** The worst lag of this process's event loop (it hosts the double, the controllers and the load). */
  worstEventLoopLagMs: number;
}

/**
 * What an uninstall leaves on main today (issue 22 item 12: the generated Secret and the Lease have
 * no owner the uninstall removes). Reported, not counted against I4, until that item lands: then
 * empty this list and I4 holds the uninstall to leaving nothing.
 */
export const UNINSTALL_LEFTOVERS_ON_MAIN: readonly RegExp[] = [
  // cert-manager keeps a deleted Certificate's Secret (unless its controller runs with
  // --enable-certificate-owner-ref): the cert-manager overlay's uninstall leaves the CA's key and
  // the serving key pair. Found by the exploration (seed 101); the same question as item 12.
  /^secrets\/kube-admission-server-ca$/,
  /^secrets\/kube-admission-server-serving-cert$/,
];

/** SHUTDOWN_DELAY + SHUTDOWN_TIMEOUT of the shipped Deployment, plus slack for a loaded machine. */
const SIGTERM_TO_EXIT_MS = 3000 + 5000 + 2000;
/** The shipped Lease duration (15 s) plus retry periods and slack. */
const LEASE_TAKEOVER_MS = 15_000 + 15_000;

export async function runChaos(options: RunOptions): Promise<RunResult> {
  const schedule = drawSchedule(options.seed, options.mode);
  const dir = await mkdtemp(join(tmpdir(), `chaos-${options.seed}-`));
  const stop = new AbortController();
  const echo = options.log;
  const volumeDelays = new Random(options.seed ^ 0x5eed);
  const history = new PolicyHistory();
  // The cluster's callbacks start before the judges exist: they look them up when called.
  const late: { world?: World; calls?: CallJudge } = {};
  const cluster = await startLocalCluster({
    dir,
    slowStart: options.slowStart,
    onCall: (call) => late.calls?.record(call),
    volumeSyncDelayMs: () => volumeDelays.int(0, options.volumeSyncMaxMs),
    log: (line) => {
      if (/container exited|SIGTERM|probe failed|failed calling webhook/.test(line)) late.world?.note(`cluster: ${line.split('\n')[0]}`);
    },
  });
  const world = new World(cluster, schedule.mode, stop.signal, echo);
  late.world = world;
  const ledger = new Ledger(() => world.now(), echo);
  const calls = new CallJudge(history, ledger, (at) => at - world.at(0));
  late.calls = calls;
  const lag = new LagMonitor();
  const processes = new ProcessJudge(world, ledger, { sigtermToExitMs: SIGTERM_TO_EXIT_MS, leaseTakeoverMs: LEASE_TAKEOVER_MS }, lag, calls);
  const sizes: Sizes = { scale: options.scale, waitMs: options.waitMs };
  const ctx: OperationContext = { world, history, calls, processes, sizes };
  const monitor = setInterval(() => processes.check(), 250);
  const load = new AdmissionLoad({ url: cluster.api.url, caPem: cluster.api.caPem, token: cluster.api.token }, options.ratePerSecond, 4);
  const steps: StepResult[] = [];
  let operations = 0;
  let leftover: string[] = [];
  const began = performance.now();
  try {
    world.note(`seed ${options.seed}: ${schedule.mode} mode, ${options.minutes} min, scale ${options.scale}`);
    cluster.api.store.createNamespace(LOAD_NAMESPACE);
    const manifests = await renderManifests(schedule.mode);
    await install(world, manifests, history.newest.text);
    history.written(history.newest);
    await untilSettled(ctx, 'install');
    await world.until('installed: the configurations as the policy says', () => divergence(world, history).length === 0, options.convergenceBoundMs, () => divergence(world, history).join('; '));
    world.note('installed: 2 replicas ready, both configurations registered');
    load.start();
    const deadline = began + options.minutes * 60_000;
    for (const step of schedule.steps) {
      if (performance.now() >= deadline || (options.steps !== undefined && steps.length >= options.steps)) break;
      steps.push(await runStep(ctx, step, ledger, options));
      operations += 1 + step.side.length;
    }
    await sleep(2000, stop.signal);
  } catch (error) {
    ledger.add('I3', `the run could not go on: ${(error as Error).message}`);
  } finally {
    const loadCounts = await load.stop();
    processes.check();
    calls.flush();
    world.note(`load stopped: ${loadCounts.sent} writes sent`);
  }
  try {
    const manifests = await renderManifests(schedule.mode);
    await uninstall(world, manifests);
    await world.until('uninstalled: every Pod gone', () => world.pods().length === 0, options.waitMs);
    await sleep(3000, stop.signal); // the garbage collector's and the server's last writes
    processes.check();
    leftover = leftovers(world);
    const unexpected = leftover.filter((name) => !UNINSTALL_LEFTOVERS_ON_MAIN.some((known) => known.test(name)));
    for (const name of unexpected) ledger.add('I4', `the uninstall left ${name}`);
    for (const pid of processes.pids) if (alive(pid)) ledger.add('I5', `server process ${pid} still runs after the uninstall`);
  } catch (error) {
    ledger.add('I4', `the uninstall did not finish: ${(error as Error).message}`);
  } finally {
    clearInterval(monitor);
    lag.stop();
    stop.abort();
    await cluster.close(2);
    await rm(dir, { recursive: true, force: true });
  }
  return {
    seed: options.seed,
    mode: schedule.mode,
    minutes: options.minutes,
    scale: options.scale,
    wallMs: Math.round(performance.now() - began),
    steps,
    operations,
    policyVersions: history.versions.length,
    load: load.counts,
    calls: calls.counts,
    processes: processes.figures,
    violations: { ...ledger.counts },
    firstViolations: ledger.kept,
    log: world.log,
    uninstallLeftovers: leftover,
    worstEventLoopLagMs: Math.round(lag.worstMs),
  };
}

/** The last lines of every install Pod's log, into the operation log: what a failed step needs for a diagnosis. */
function notePodLogs(world: World): void {
  for (const pod of world.pods()) {
    const name = pod.metadata?.name ?? '';
    const log = world.cluster.kubelet.logs.read(NS, name, { previous: false, tailLines: 12 });
    world.note(`log of ${name}:\n${'text' in log ? log.text : log.error}`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function runStep(ctx: OperationContext, step: Step, ledger: Ledger, options: RunOptions): Promise<StepResult> {
  const began = performance.now();
  const names = [step.workload.name, ...step.side.map((s) => s.name)];
  ctx.world.note(`step ${step.index + 1}: ${names.join(' + ')}`);
  // Each operation finishes or ends in a violation saying why, within its own bound (run-operation.ts).
  const results = await Promise.allSettled([step.workload, ...step.side].map((op) => runOperation(ctx, op, op === step.workload ? 0 : Math.round(op.startMs * options.scale), ledger, step.index + 1)));
  for (const result of results) if (result.status === 'rejected') ctx.world.note(`an operation did not start: ${(result.reason as Error).message}`);
  const endedAt = performance.now();
  let convergedAfterMs: number | undefined;
  try {
    await ctx.world.until(
      `step ${step.index + 1}: converged to policy v${ctx.history.newest.version} with the Deployment rolled out`,
      () => divergence(ctx.world, ctx.history).length === 0 && settledProblem(ctx.world) === undefined,
      options.convergenceBoundMs,
      () => [...divergence(ctx.world, ctx.history), settledProblem(ctx.world) ?? ''].filter(Boolean).join('; '),
    );
    convergedAfterMs = Math.round(performance.now() - endedAt);
    ctx.world.note(`step ${step.index + 1} converged ${convergedAfterMs} ms after its operations ended`);
  } catch (error) {
    ledger.add('I3', (error as Error).message);
    notePodLogs(ctx.world);
  }
  // Failed calls of the step are judged now that its kills, closes and outages have their windows.
  ctx.processes.check();
  ctx.calls.flush();
  return { index: step.index, operations: names, ms: Math.round(endedAt - began), ...(convergedAfterMs === undefined ? {} : { convergedAfterMs }) };
}

export const violationTotal = (result: RunResult): number => Object.values(result.violations).reduce((sum, n) => sum + n, 0);
