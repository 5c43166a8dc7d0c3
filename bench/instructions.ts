/**
 * Instructions per review at steady state, counted by valgrind's callgrind: the same count for the
 * same code whatever else runs on the machine, where req/s on these shared 2-core machines swings
 * by a third between runs. Each server runs under callgrind; warm-up reviews let the JIT settle
 * (its compiler threads are counted too), then the counters are zeroed, the measured reviews
 * sent, and the counters dumped. Kernel work (the socket writes, loopback TCP) is not counted.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestCa, issueServingCert } from '../test/support/tls/test-certs.js';
import type { TargetMode } from './admission-target.js';
import { benchAgent, sendFixedCount } from './fixed-count-load.js';
import { podCreateReview } from './pod-review.js';
import { startTarget, stopTarget } from './target-process.js';

const WARMUP = Number(process.env.BENCH_INSTR_WARMUP ?? 10_000);
const MEASURED = Number(process.env.BENCH_INSTR_MEASURED ?? 10_000);
const CONNECTIONS = 16;

interface InstructionScenario {
  label: string;
  mode: TargetMode;
  path: string;
}

export interface InstructionResult {
  label: string;
  instructionsPerReview: number;
  failed: number;
}

const SCENARIOS: InstructionScenario[] = [
  { label: 'reference: raw node:https, JSON.parse, allow echoing the uid', mode: 'reference', path: '/' },
  { label: 'validate route', mode: 'fastify', path: '/validate/require-labels?timeout=10s' },
  { label: 'mutate route (one label added)', mode: 'fastify', path: '/mutate/add-label?timeout=10s' },
  { label: 'validate route, built-in rule (denyPrivileged)', mode: 'fastify', path: '/validate/builtin-deny-privileged?timeout=10s' },
  { label: 'validate route, cel rule (two validations)', mode: 'fastify', path: '/validate/cel-memory-limits?timeout=10s' },
];
const ONLY = process.env.BENCH_INSTR_ONLY?.split(',').map(Number);

export function callgrindAvailable(): boolean {
  return !spawnSync('callgrind_control', ['--version']).error && !spawnSync('valgrind', ['--version']).error;
}

function callgrindControl(action: '-z' | '-d', pid: number): void {
  const run = spawnSync('callgrind_control', [action, String(pid)], { encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) throw new Error(`callgrind_control ${action} ${pid} failed: ${run.stderr || run.error?.message}`);
}

/** The instruction total of the newest dump in `dir` (callgrind writes `<file>.<n>` per dump). */
function dumpedInstructions(dir: string): number {
  const dumps = readdirSync(dir).filter((name) => /\.\d+$/.test(name)).sort();
  const last = dumps.at(-1);
  if (!last) throw new Error(`callgrind wrote no dump in ${dir}`);
  const match = /^(?:summary|totals): (\d+)/m.exec(readFileSync(path.join(dir, last), 'utf8'));
  if (!match) throw new Error(`callgrind dump ${last} has no instruction total`);
  return Number(match[1]);
}

/** How long a server under valgrind may take to start: minutes on a busy machine. */
const START_TIMEOUT_MS = Number(process.env.BENCH_INSTR_START_TIMEOUT ?? 600) * 1000;

/** The scenarios of one mode share a server under callgrind (one slow start): each warmed up, then counted on its own. */
async function measureMode(scenarios: InstructionScenario[], tls: { certPem: string; keyPem: string }, body: string, log: (line: string) => void): Promise<InstructionResult[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'callgrind-'));
  const wrapper = {
    command: 'valgrind',
    args: ['--tool=callgrind', '--smc-check=all-non-file', '--dump-instr=no', `--callgrind-out-file=${path.join(dir, 'callgrind.out')}`, '--log-file=/dev/null'],
  };
  const target = await startTarget((scenarios[0] as InstructionScenario).mode, tls, { wrapper, startTimeoutMs: START_TIMEOUT_MS });
  const results: InstructionResult[] = [];
  try {
    for (const scenario of scenarios) {
      log(`instructions: ${scenario.label} (${WARMUP} warm-up + ${MEASURED} measured reviews under callgrind)`);
      // The same connections for the warm-up and the count: TLS handshakes (an RSA signature each)
      // are no part of a review's cost, and kube-apiserver keeps its connections.
      const agent = benchAgent(CONNECTIONS);
      const load = { port: target.port, path: scenario.path, body, connections: CONNECTIONS, requestTimeoutMs: 30_000, agent };
      try {
        await sendFixedCount({ ...load, count: WARMUP });
        callgrindControl('-z', target.child.pid as number);
        const { failed } = await sendFixedCount({ ...load, count: MEASURED });
        callgrindControl('-d', target.child.pid as number);
        results.push({ label: scenario.label, instructionsPerReview: dumpedInstructions(dir) / MEASURED, failed });
      } finally {
        agent.destroy();
      }
    }
    return results;
  } finally {
    await stopTarget(target.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runInstructionBench(log: (line: string) => void): Promise<InstructionResult[]> {
  if (!callgrindAvailable()) {
    throw new Error('valgrind is not installed: the instruction count needs it (Debian/Ubuntu: apt-get install -y valgrind)');
  }
  const tls = issueServingCert(createTestCa('bench CA'));
  const body = JSON.stringify(podCreateReview());
  // BENCH_INSTR_ONLY=0,3,4 measures those scenarios alone (each takes minutes under callgrind).
  const wanted = SCENARIOS.filter((_, index) => !ONLY || ONLY.includes(index));
  const results: InstructionResult[] = [];
  for (const mode of new Set(wanted.map((scenario) => scenario.mode))) {
    results.push(...(await measureMode(wanted.filter((scenario) => scenario.mode === mode), tls, body, log)));
  }
  return results;
}

/** The admission targets: instructions per review against the reference's. */
export const INSTRUCTION_TARGETS = { validate: 1.25, mutate: 1.6 };

export function instructionReport(results: InstructionResult[]): string {
  const reference = results.find((r) => r.label === SCENARIOS[0]?.label);
  const ratio = (r: InstructionResult | undefined): string => (r && reference ? `${(r.instructionsPerReview / reference.instructionsPerReview).toFixed(2)}x` : 'n/a');
  const lines = [
    `valgrind --tool=callgrind, user-space instructions of the whole server process (all threads) per review, after ${WARMUP} warm-up reviews, over ${MEASURED} reviews on the same ${CONNECTIONS} keep-alive TLS connections (no handshake in the count). Unlike req/s, the count does not depend on what else the machine runs; whether a major GC falls in the measured window still moves it by up to ~15%.`,
    '',
    '| server | instructions per review | vs reference | failed |',
    '|---|---:|---:|---:|',
    ...results.map((r) => `| ${r.label} | ${Math.round(r.instructionsPerReview / 1000)}k | ${ratio(r)} | ${r.failed} |`),
  ];
  const validate = results.find((r) => r.label === SCENARIOS[1]?.label);
  const mutate = results.find((r) => r.label === SCENARIOS[2]?.label);
  if (reference && validate && mutate) {
    const met = (r: InstructionResult, bound: number): string => (r.instructionsPerReview / reference.instructionsPerReview <= bound ? 'met' : 'MISSED');
    lines.push(
      '',
      `- validate ${ratio(validate)} the reference's instructions per review (target <= ${INSTRUCTION_TARGETS.validate}x): ${met(validate, INSTRUCTION_TARGETS.validate)}`,
      `- mutate ${ratio(mutate)} (target <= ${INSTRUCTION_TARGETS.mutate}x): ${met(mutate, INSTRUCTION_TARGETS.mutate)}`,
    );
  }
  return lines.join('\n');
}
