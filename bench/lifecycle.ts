/**
 * Lifecycle timings against the Kubernetes API test double, the compiled server as a child
 * process: start -> both configurations registered (generated CA), SIGTERM -> exit with a
 * healthy API, and SIGTERM -> exit with the API hanging on every DELETE.
 */
import { listRounded, median } from './stats.js';
import { ClusterHarness, type Cleanups } from '../test/support/kube/cluster-harness.js';

export interface LifecycleBenchResult {
  runs: number;
  startToRegisteredMs: number[];
  sigtermToExitHealthyMs: number[];
  sigtermToExitHangingMs: number[];
  shutdownTimeoutMs: number;
  exitCodesHanging: (number | null)[];
}

export const LIFECYCLE_TARGETS = { startToRegisteredMs: 1000, sigtermToExitHealthyMs: 300, hangingSlackMs: 500 };
const SHUTDOWN_TIMEOUT_MS = 5000;

/** The benchmarks' stand-in for tap's teardown list: run in reverse order at the end. */
export class CleanupList implements Cleanups {
  readonly #fns: (() => unknown)[] = [];
  teardown(fn: () => unknown): void {
    this.#fns.push(fn);
  }
  async run(): Promise<void> {
    for (const fn of this.#fns.reverse()) await fn();
  }
}

/** Start until both configurations exist, measured from spawn to the second successful create. */
async function startAndRegister(cleanups: CleanupList, env: Record<string, string>) {
  const cluster = await ClusterHarness.start(cleanups);
  cluster.seedDeployment(['kas-bench']);
  const spawnedAt = performance.now();
  const replica = await cluster.startReplica(cleanups, 'kas-bench', [], env);
  const creates = cluster.api.requests.filter((r) => r.verb === 'create' && r.status === 201 && r.resource?.endsWith('webhookconfigurations'));
  if (creates.length !== 2) throw new Error(`expected two configuration creates, saw ${creates.length}`);
  return { cluster, replica, registeredMs: Math.max(...creates.map((r) => r.endedAt ?? r.startedAt)) - spawnedAt };
}

export async function runLifecycleBench(log: (line: string) => void, runs = Number(process.env.BENCH_LIFECYCLE_RUNS ?? 5)): Promise<LifecycleBenchResult> {
  const result: LifecycleBenchResult = { runs, startToRegisteredMs: [], sigtermToExitHealthyMs: [], sigtermToExitHangingMs: [], shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS, exitCodesHanging: [] };
  for (let run = 0; run < runs; run++) {
    log(`lifecycle run ${run + 1}/${runs}`);
    const healthy = new CleanupList();
    try {
      const { replica, registeredMs } = await startAndRegister(healthy, { TEARDOWN: 'always' });
      result.startToRegisteredMs.push(registeredMs);
      const exit = await replica.child.stop('SIGTERM');
      if (exit.code !== 0) throw new Error(`healthy shutdown exited ${exit.code}`);
      result.sigtermToExitHealthyMs.push(exit.ms);
    } finally {
      await healthy.run();
    }
    const hanging = new CleanupList();
    try {
      const { cluster, replica } = await startAndRegister(hanging, { TEARDOWN: 'always', SHUTDOWN_TIMEOUT: `${SHUTDOWN_TIMEOUT_MS}ms` });
      cluster.api.faults.add({ verb: 'delete' }, { hang: true });
      const exit = await replica.child.stop('SIGTERM');
      result.sigtermToExitHangingMs.push(exit.ms);
      result.exitCodesHanging.push(exit.code);
    } finally {
      await hanging.run();
    }
  }
  return result;
}


export function lifecycleReport(r: LifecycleBenchResult): string {
  const deadline = r.shutdownTimeoutMs + LIFECYCLE_TARGETS.hangingSlackMs;
  const worstHanging = Math.max(...r.sigtermToExitHangingMs);
  const lines = [
    `${r.runs} runs; each run starts a fresh API test double, so every start generates its CA (RSA-2048 keys) and persists it in a Secret.`,
    '',
    '| measurement | median ms | all runs ms | target |',
    '|---|---:|---|---|',
    `| process start -> both configurations registered | ${Math.round(median(r.startToRegisteredMs))} | ${listRounded(r.startToRegisteredMs)} | median <= ${LIFECYCLE_TARGETS.startToRegisteredMs} |`,
    `| SIGTERM -> exit, healthy API (teardown always: two DELETEs) | ${Math.round(median(r.sigtermToExitHealthyMs))} | ${listRounded(r.sigtermToExitHealthyMs)} | median <= ${LIFECYCLE_TARGETS.sigtermToExitHealthyMs} |`,
    `| SIGTERM -> exit, API hanging on DELETE (--shutdown-timeout ${r.shutdownTimeoutMs / 1000}s) | ${Math.round(median(r.sigtermToExitHangingMs))} | ${listRounded(r.sigtermToExitHangingMs)} | every run <= ${deadline} |`,
    '',
    `- start -> registered: ${median(r.startToRegisteredMs) <= LIFECYCLE_TARGETS.startToRegisteredMs ? 'met' : 'MISSED'}`,
    `- SIGTERM -> exit (healthy): ${median(r.sigtermToExitHealthyMs) <= LIFECYCLE_TARGETS.sigtermToExitHealthyMs ? 'met' : 'MISSED'}`,
    `- SIGTERM -> exit (hanging API): worst ${Math.round(worstHanging)} ms, ${worstHanging <= deadline ? 'met' : 'MISSED'}; exit codes ${r.exitCodesHanging.join(', ')} (1: the timed-out teardown is reported as a failed shutdown)`,
  ];
  return lines.join('\n');
}
