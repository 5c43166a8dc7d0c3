/** The figures of a run, and the Markdown that presents them. */
import type { ProcessRecord, ShutdownRecord } from './cluster.js';
import type { ScenarioResult, StepRecord } from './scenario.js';

export interface MemoryFigure {
  podName: string;
  role: string;
  /** Started before the memory baseline and still running when the load stopped. */
  wholeRun: boolean;
  fromMs: number;
  toMs: number;
  baselineKiB: number;
  endKiB: number;
  peakKiB: number;
  growthPercent: number;
}

export interface Summary {
  served: number;
  failed: number;
  latencyMs: { p50: number; p99: number; max: number };
  lateShutdowns: ShutdownRecord[];
  unconverged: StepRecord[];
  memory: MemoryFigure[];
}

/** The nearest-rank percentile. */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

/** From the first sample after the process's warm-up (the run's baseline for the first replicas) to its last. */
function memoryOf(process: ProcessRecord, result: ScenarioResult): MemoryFigure | undefined {
  const baselineAt = Math.max(result.memoryBaselineAtMs, process.startedAtMs + result.options.warmupMs);
  const baseline = process.samples.find((s) => s.atMs >= baselineAt);
  const end = process.samples.at(-1);
  if (!baseline || !end || end === baseline) return undefined;
  const lastStepEnd = Math.max(0, ...result.steps.map((s) => s.startedAtMs));
  return {
    podName: process.podName,
    role: process.role,
    wholeRun: process.startedAtMs <= result.memoryBaselineAtMs && (process.endedAtMs === undefined || process.endedAtMs > lastStepEnd),
    fromMs: baseline.atMs,
    toMs: end.atMs,
    baselineKiB: baseline.rssKiB,
    endKiB: end.rssKiB,
    peakKiB: Math.max(...process.samples.map((s) => s.rssKiB)),
    growthPercent: ((end.rssKiB - baseline.rssKiB) / baseline.rssKiB) * 100,
  };
}

export function summarize(result: ScenarioResult): Summary {
  const latencies = result.load.latenciesMs;
  return {
    served: result.load.served,
    failed: result.load.failed,
    latencyMs: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), max: Math.max(0, ...latencies) },
    lateShutdowns: result.shutdowns.filter((s) => s.signal === 'SIGTERM' && s.ms > s.deadlineMs),
    unconverged: result.steps.filter((s) => s.convergedAfterMs === undefined),
    memory: result.processes.map((p) => memoryOf(p, result)).filter((m) => m !== undefined),
  };
}

const roleName = (leader: boolean): string => (leader ? 'leader' : 'not leader');
const mib = (kib: number): string => (kib / 1024).toFixed(1);
const seconds = (ms: number): string => (ms / 1000).toFixed(1);

export function markdownReport(result: ScenarioResult, summary: Summary, command: string): string {
  const { load } = result;
  const reasons = Object.entries(load.failuresByReason).map(([reason, count]) => `${reason} ${count}`).join(', ') || 'none';
  const sigterms = result.shutdowns.filter((s) => s.signal === 'SIGTERM');
  const lines = [
    `Node ${result.node}, started ${result.startedAt}, ${seconds(result.wallMs)} s wall. Command: \`${command}\``,
    '',
    '| measurement | value | target |',
    '|---|---:|---|',
    `| admissions served (allow / mutate / deny) | ${load.served} (${load.byClass.allow} / ${load.byClass.mutate} / ${load.byClass.deny}) | |`,
    `| **failed** (wrong outcome of any kind) | **${load.failed}** (${reasons}) | 0 |`,
    `| sent again after their replica went away (Service model) | ${load.retriedAfterEndpointLoss} | counted, not failed |`,
    `| writes refused while no kube-apiserver was up (API restart: no admission happened) | ${load.refusedByControlPlane} | counted, not failed |`,
    `| admission latency p50 / p99 / max | ${summary.latencyMs.p50.toFixed(1)} / ${summary.latencyMs.p99.toFixed(1)} / ${summary.latencyMs.max.toFixed(1)} ms | |`,
    `| fault steps / not converged | ${result.steps.length} / ${summary.unconverged.length} | 0 not converged |`,
    `| convergence after a fault, median / worst | ${seconds(percentile(result.steps.flatMap((s) => s.convergedAfterMs ?? []), 0.5))} / ${seconds(Math.max(0, ...result.steps.flatMap((s) => s.convergedAfterMs ?? [])))} s | within ${seconds(result.options.convergenceTimeoutMs)} s |`,
    `| rotations: leaf renewals + CA rollovers | ${result.rotations.leafRenewals} + ${result.rotations.caRollovers} | |`,
    `| configuration deletions (registrations lost) | ${result.configurationDeletions} | 0 |`,
    `| replicas that failed to start or crashed | ${result.replicaFailures.length} | 0 |`,
    `| SIGTERM -> exit, worst (deadline: --shutdown-timeout + 0.5 s) | ${seconds(Math.max(0, ...sigterms.map((s) => s.ms)))} s of ${seconds(result.options.shutdownTimeoutMs + 500)} s; ${summary.lateShutdowns.length} late | 0 late |`,
    `| final state differs from the desired one | ${result.finalDivergence.length === 0 ? 'no' : result.finalDivergence.join('; ')} | no |`,
    '',
    'Memory (RSS from /proc/<pid>/status; baseline after the warm-up, end at the last sample under load):',
    '',
    '| process | role | whole run | from -> to | RSS baseline -> end (peak) | growth |',
    '|---|---|---|---|---|---:|',
    ...summary.memory.map(
      (m) => `| ${m.podName} | ${m.role} | ${m.wholeRun ? 'yes' : 'no'} | ${seconds(m.fromMs)} -> ${seconds(m.toMs)} s | ${mib(m.baselineKiB)} -> ${mib(m.endKiB)} MiB (${mib(m.peakKiB)}) | ${m.growthPercent.toFixed(1)} % |`,
    ),
    '',
    'Open descriptors of the processes that lived the whole run, idle (no load, no client connections) before the load and after it (/proc/<pid>/fd):',
    '',
    '| process | role before -> after | fds before -> after | sockets before -> after |',
    '|---|---|---|---|',
    ...result.idleDescriptors.map((d) => `| ${d.podName} | ${roleName(d.leaderBefore)} -> ${roleName(d.leaderAfter)} | ${d.before.fds} -> ${d.after.fds} | ${d.before.sockets} -> ${d.after.sockets} |`),
    '',
    'A leader holds two sockets more than a follower: its watches of the two configurations.',
    '',
    'Shutdowns:',
    '',
    '| replica | signal | leader | exit after | code | teardown decision |',
    '|---|---|---|---:|---|---|',
    ...result.shutdowns.map((s) => `| ${s.podName} | ${s.signal} | ${s.wasLeader ? 'yes' : 'no'} | ${s.ms} ms | ${s.code ?? 'killed'} | ${s.teardown ?? '-'} |`),
    '',
    'Fault steps (convergence: from the end of the fault to both configurations as desired, caBundle = ca.crt, and the Lease renewed by a live replica since):',
    '',
    '| at | step | fault took | converged after |',
    '|---:|---|---:|---:|',
    ...result.steps.map((s) => `| ${seconds(s.startedAtMs)} s | ${s.step} | ${s.faultMs} ms | ${s.convergedAfterMs === undefined ? `NOT: ${s.problem ?? ''}` : `${s.convergedAfterMs} ms`} |`),
  ];
  if (result.replicaFailures.length > 0) {
    lines.push('', 'Replica failures:', '', ...result.replicaFailures.map((f) => `- ${seconds(f.atMs)} s ${f.podName} ${f.kind}: ${f.detail.slice(0, 400)}`));
  }
  if (load.failureSamples.length > 0) {
    lines.push('', 'First failures:', '', ...load.failureSamples.map((f) => `- ${seconds(f.atMs)} s ${f.reason} (${f.objectClass} via ${f.endpoint}): ${f.message.slice(0, 300)}`));
  }
  return lines.join('\n');
}
