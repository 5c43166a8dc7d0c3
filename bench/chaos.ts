/**
 * `npm run chaos -- --seed N --minutes M`: one exploration of the operations platform teams
 * perform, drawn from the seed, against the compiled server on the local cluster, with the
 * invariants checked all along (test/support/chaos/explore/). Prints the report; a failed run
 * prints its seed, the command that replays it and the operation log, and exits 1. Raw results
 * in bench/results/. Options:
 *   --seed N        the schedule (default: a random one, printed)
 *   --seeds A,B,C   several runs one after the other
 *   --minutes M     steps start until M minutes have passed (default 5)
 *   --steps K       at most K steps (replays a run of K steps exactly)
 *   --scale S       durations at S times production's (default 1; CI uses 0.1)
 *   --mode MODE     generate or files (default: drawn from the seed)
 *   --rate R        admissions per second (default 4)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runChaos, violationTotal } from '../test/support/chaos/explore/run.js';
import { textReport } from '../test/support/chaos/explore/report.js';
import { sizesAt } from '../test/support/chaos/explore/sizes.js';
import type { TlsMode } from '../test/support/chaos/explore/world.js';

function number(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`--${name} must be a number from 0, got "${value}"`);
  return parsed;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string' },
      seeds: { type: 'string' },
      minutes: { type: 'string' },
      steps: { type: 'string' },
      scale: { type: 'string' },
      mode: { type: 'string' },
      rate: { type: 'string' },
    },
  });
  if (values.mode !== undefined && values.mode !== 'generate' && values.mode !== 'files') throw new Error(`--mode is generate or files, got "${values.mode}"`);
  const seeds = values.seeds ? values.seeds.split(',').map((s) => number('seeds', s.trim(), 0)) : [number('seed', values.seed, Math.floor(Math.random() * 1_000_000))];
  const scale = number('scale', values.scale, 1);
  if (scale <= 0) throw new Error('--scale must be above 0');
  let failed = 0;
  for (const seed of seeds) {
    const log = (line: string): void => console.error(`[chaos ${seed}] ${line}`);
    const result = await runChaos({
      seed,
      minutes: number('minutes', values.minutes, 5),
      ...(values.steps === undefined ? {} : { steps: number('steps', values.steps, 0) }),
      ...(values.mode === undefined ? {} : { mode: values.mode as TlsMode }),
      ...sizesAt(scale),
      ratePerSecond: number('rate', values.rate, 4),
      slowStart: 4,
      log,
    });
    console.log(textReport(result));
    console.log('');
    mkdirSync('bench/results', { recursive: true });
    const file = `bench/results/chaos-${seed}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
    writeFileSync(file, JSON.stringify(result, null, 2));
    log(`raw results: ${file}`);
    if (violationTotal(result) > 0) failed++;
  }
  if (failed > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(`[chaos] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
