/**
 * One run: the install comes up, the admission load starts, the schedule's faults run one step at
 * a time with a convergence check after each, then the load stops and everything is measured and
 * shut down. Used by the CI test (small) and `npm run soak` (large).
 */
import { sleep } from '../../../local-cluster/util/waits.js';
import type { Cleanups } from '../kube/cluster-harness.js';
import { ChaosCluster, type ProcessRecord, type ReplicaFailure, type ShutdownRecord } from './cluster.js';
import { FAULTS, type FaultSizes } from './faults.js';
import { BUNDLED_POLICY_FILE } from '../../../src/config/load-config.js';
import { NAME, NAMESPACE } from '../kube/cluster-harness.js';
import { expectedWebhooks, type ExpectedWebhooks } from './expected-configurations.js';
import { awaitConvergence, bundleProblems, divergence, watchForDeletions } from './invariants.js';
import { AdmissionLoad, type LoadStats } from './load.js';
import { sampleProcess, type ProcessSample } from './process-stats.js';
import { faultsOf, stepName, type Round } from './schedule.js';
import type { BundleExpectation } from './rotator.js';
import { until } from './wait.js';

export interface ScenarioOptions {
  rounds: Round[];
  /** Replicas that take part in leader election; replaced when stopped. */
  registeringReplicas: number;
  /** A replica with --no-register that lives the whole run (the long-lived process of a soak). */
  servingOnlyReplica: boolean;
  ratePerSecond: number;
  workers: number;
  sizes: FaultSizes;
  convergenceTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** Load before the first fault; the memory baseline is taken at its end. */
  warmupMs: number;
  sampleEveryMs: number;
  env: Record<string, string>;
  log: (line: string) => void;
}

export interface StepRecord {
  step: string;
  startedAtMs: number;
  faultMs: number;
  /** From the end of the fault to the desired state; undefined when it never came. */
  convergedAfterMs?: number;
  notes: string[];
  problem?: string;
}

export interface IdleDescriptors {
  podName: string;
  before: ProcessSample;
  after: ProcessSample;
  /** The leader holds two more sockets than a follower: its watches of the configurations. */
  leaderBefore: boolean;
  leaderAfter: boolean;
}

export interface ScenarioResult {
  node: string;
  startedAt: string;
  wallMs: number;
  options: Omit<ScenarioOptions, 'log' | 'rounds'> & { schedule: string[][] };
  load: LoadStats;
  steps: StepRecord[];
  finalDivergence: string[];
  configurationDeletions: number;
  rotations: { leafRenewals: number; caRollovers: number };
  shutdowns: ShutdownRecord[];
  /** Replicas that failed to start or crashed (target: none). */
  replicaFailures: ReplicaFailure[];
  processes: ProcessRecord[];
  /** Long-lived processes, idle (no load) at the start and at the end. */
  idleDescriptors: IdleDescriptors[];
  memoryBaselineAtMs: number;
}

async function runStep(cluster: ChaosCluster, options: ScenarioOptions, desired: ExpectedWebhooks, step: Round['steps'][number], signal: AbortSignal): Promise<StepRecord> {
  const startedAtMs = cluster.now();
  const record: StepRecord = { step: stepName(step), startedAtMs, faultMs: 0, notes: [] };
  let faultEndedAt = Date.now();
  const check = (): string[] => divergence(cluster.api.store, desired, cluster.rotator.expectedBundle(), cluster.live('registering'), faultEndedAt);
  const bundleRegistered = async (expected: BundleExpectation): Promise<void> => {
    await awaitConvergence(cluster.api.store, () => bundleProblems(cluster.api.store, expected), { timeoutMs: options.sizes.waitMs, signal });
  };
  try {
    const details = await Promise.all(faultsOf(step).map((fault) => FAULTS[fault]({ cluster, sizes: options.sizes, signal, bundleRegistered })));
    record.notes = details.map((d) => d.note);
    record.faultMs = Math.round(cluster.now() - startedAtMs);
    faultEndedAt = Date.now();
    record.convergedAfterMs = Math.round(await awaitConvergence(cluster.api.store, check, { timeoutMs: options.convergenceTimeoutMs, signal }));
  } catch (error) {
    record.problem = error instanceof Error ? error.message : String(error);
    record.faultMs ||= Math.round(cluster.now() - startedAtMs);
  }
  options.log(`${record.step}: ${record.problem ?? `converged ${record.convergedAfterMs} ms after the fault (${record.faultMs} ms)`}`);
  return record;
}

/** Samples until two in a row agree (sockets of closed connections take a moment to go). */
async function settledSample(pid: number, at: () => number): Promise<ProcessSample | undefined> {
  let last = await sampleProcess(pid, at());
  await until('descriptors settle', async () => {
    const next = await sampleProcess(pid, at());
    const same = next !== undefined && last !== undefined && next.fds === last.fds;
    last = next;
    return same;
  }, { timeoutMs: 10_000, everyMs: 1000 }).catch(() => undefined);
  return last;
}

export async function runScenario(options: ScenarioOptions, cleanups: Cleanups): Promise<ScenarioResult> {
  const startedAt = new Date();
  const run = new AbortController();
  cleanups.teardown(() => run.abort());
  const replicas = options.registeringReplicas + (options.servingOnlyReplica ? 1 : 0);
  const cluster = await ChaosCluster.start(cleanups, { shutdownTimeoutMs: options.shutdownTimeoutMs, env: options.env }, replicas);
  await Promise.all([
    ...Array.from({ length: options.registeringReplicas }, () => cluster.addReplica('registering')),
    ...(options.servingOnlyReplica ? [cluster.addReplica('serving-only')] : []),
  ]);
  // The replicas run the bundled policy (no --policy-file): what it calls for, computed independently.
  const desired = expectedWebhooks(BUNDLED_POLICY_FILE, { serviceName: NAME, namespace: NAMESPACE });
  // The load is on an installed server: both configurations registered as the policy calls for.
  // Ready replicas do not say so by themselves (a follower is Ready without them, and on a loaded
  // machine the leader's first registration can still be under way when the last one is).
  const installedSince = Date.now();
  await awaitConvergence(cluster.api.store, () => divergence(cluster.api.store, desired, cluster.rotator.expectedBundle(), cluster.live('registering'), installedSince - 3000), {
    timeoutMs: options.convergenceTimeoutMs,
    signal: run.signal,
  });
  const deletions = watchForDeletions(cluster.api.store);
  const longLived = cluster.processes.slice();
  const idleBefore = await Promise.all(longLived.map((p) => sampleProcess(p.pid, cluster.now())));
  const leaderBefore = cluster.leader();

  const sampler = setInterval(() => void cluster.sample(), options.sampleEveryMs);
  const load = new AdmissionLoad(cluster.service, { ratePerSecond: options.ratePerSecond, workers: options.workers, startedAt: performance.now() });
  load.start();
  options.log(`load running: ${options.ratePerSecond} admissions/s over ${cluster.live().length} replicas`);
  const steps: StepRecord[] = [];
  let stats: LoadStats;
  let memoryBaselineAtMs = 0;
  try {
    await sleep(options.warmupMs, run.signal);
    await cluster.sample();
    memoryBaselineAtMs = cluster.now();
    for (const [index, round] of options.rounds.entries()) {
      const roundStart = performance.now();
      options.log(`round ${index + 1}/${options.rounds.length}`);
      for (const step of round.steps) steps.push(await runStep(cluster, options, desired, step, run.signal));
      await sleep(Math.max(0, round.minMs - (performance.now() - roundStart)), run.signal);
    }
    await cluster.settle();
    await cluster.sample();
  } finally {
    clearInterval(sampler);
    stats = await load.stop();
  }
  const leaseDurationMs = 3000; // the harness's LEASE_DURATION: a leading holder renews well within it
  const finalDivergence = divergence(cluster.api.store, desired, cluster.rotator.expectedBundle(), cluster.live('registering'), Date.now() - leaseDurationMs);
  await cluster.service.close();
  const idleDescriptors: IdleDescriptors[] = [];
  for (const [index, process] of longLived.entries()) {
    const before = idleBefore[index];
    const after = process.endedAtMs === undefined ? await settledSample(process.pid, () => cluster.now()) : undefined;
    if (before && after) idleDescriptors.push({ podName: process.podName, before, after, leaderBefore: leaderBefore === process.podName, leaderAfter: cluster.leader() === process.podName });
  }
  await cluster.stopAll();
  deletions.stop();
  const { log: _log, rounds, ...rest } = options;
  return {
    node: process.version,
    startedAt: startedAt.toISOString(),
    wallMs: Math.round(cluster.now()),
    options: { ...rest, schedule: rounds.map((r) => r.steps.map(stepName)) },
    load: stats,
    steps,
    finalDivergence,
    configurationDeletions: deletions.deletions(),
    rotations: { leafRenewals: cluster.rotator.leafRenewals, caRollovers: cluster.rotator.caRollovers },
    shutdowns: cluster.shutdowns,
    replicaFailures: cluster.failures,
    processes: cluster.processes,
    idleDescriptors,
    memoryBaselineAtMs,
  };
}
