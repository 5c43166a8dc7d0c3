/**
 * `npm run soak`: the faults-under-load scenario at full size (default 10 minutes, 5 rounds, each
 * with an API outage and a leader change, 20 rotations in all) against the compiled server.
 * Markdown report on stdout, JSON in bench/results/. Knobs for shorter trials:
 *   SOAK_MINUTES (10)  SOAK_ROUNDS (5)  SOAK_ROTATIONS (20)  SOAK_RATE (admissions/s, 40)
 *   SOAK_WORKERS (8)   SOAK_HOLD_MS (5000)  SOAK_DOWN_MS (5000)  SOAK_WARMUP_MS (60000, at most a tenth of the run)
 * Exits 1 when a target is missed: a failed admission, a step that did not converge, a late
 * shutdown, a deleted configuration, a replica that failed to start or crashed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { runScenario } from '../test/support/chaos/scenario.js';
import { soakSchedule } from '../test/support/chaos/schedule.js';
import { markdownReport, summarize } from '../test/support/chaos/report.js';
import { CleanupList } from './lifecycle.js';

const knob = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};

async function main(): Promise<void> {
  const minutes = knob('SOAK_MINUTES', 10);
  const rounds = knob('SOAK_ROUNDS', 5);
  const rotations = knob('SOAK_ROTATIONS', 20);
  const log = (line: string): void => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);
  const cleanups = new CleanupList();
  const command = `${Object.entries(process.env).filter(([k]) => k.startsWith('SOAK_')).map(([k, v]) => `${k}=${v} `).join('')}npm run soak`;
  try {
    const result = await runScenario(
      {
        rounds: soakSchedule({ minutes, rounds, rotations }),
        registeringReplicas: 2,
        servingOnlyReplica: true,
        ratePerSecond: knob('SOAK_RATE', 40),
        workers: knob('SOAK_WORKERS', 8),
        sizes: { holdMs: knob('SOAK_HOLD_MS', 5000), downMs: knob('SOAK_DOWN_MS', 5000), latencyMs: 1000, waitMs: 30_000 },
        convergenceTimeoutMs: 30_000,
        shutdownTimeoutMs: 5000,
        warmupMs: Math.min(knob('SOAK_WARMUP_MS', 60_000), (minutes * 60_000) / 10),
        sampleEveryMs: 5000,
        env: {},
        log,
      },
      cleanups,
    );
    const summary = summarize(result);
    console.log(markdownReport(result, summary, command));
    mkdirSync('bench/results', { recursive: true });
    const file = `bench/results/soak-${result.startedAt.replace(/[:.]/g, '-')}.json`;
    const { latenciesMs: _latencies, ...load } = result.load;
    writeFileSync(file, JSON.stringify({ ...result, load, summary, command }, null, 2));
    log(`raw results: ${file}`);
    const missed = summary.failed > 0 || summary.unconverged.length > 0 || summary.lateShutdowns.length > 0 || result.configurationDeletions > 0 || result.finalDivergence.length > 0 || result.replicaFailures.length > 0;
    if (missed) process.exitCode = 1;
  } finally {
    await cleanups.run();
  }
}

main().catch((error: unknown) => {
  console.error(`[soak] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
