/**
 * Admission throughput and latency: HTTP/1.1 keep-alive over TLS, 32 connections, a ~1 KB Pod
 * CREATE review, against a raw node:https fixed-allow baseline, the validate route and the mutate
 * route, back to back in one run (machines are noisy: only ratios within one run mean anything).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestCa, issueServingCert } from '../test/support/test-certs.js';
import { podCreateReview } from './pod-review.js';
import { median } from './stats.js';
import type { TargetMode } from './admission-target.js';
import { rssMb, SERVER_NODE_FLAGS, startTarget, stopTarget, type Target } from './target-process.js';
import { runWrk, wrkAvailable, type WrkResult } from './wrk.js';

const CONNECTIONS = 32;
const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

export const TARGETS = { validateRatio: 0.8, mutateRatio: 0.6, p99Ms: 5, rssMb: 100 };

interface Scenario {
  label: string;
  mode: TargetMode;
  path: string;
}

export interface ScenarioResult extends WrkResult {
  label: string;
  peakRssMb: number;
  /** Server CPU time per answered request: far less sensitive to other load on the machine than req/s. */
  cpuUsPerRequest: number;
}

export interface AdmissionBenchResult {
  body: { bytes: number };
  rounds: number;
  /** Medians over the rounds. */
  scenarios: ScenarioResult[];
  baselineRps: number;
  /** Median of the per-round ratios (each against the baseline of the same round). */
  validateRatio: number;
  mutateRatio: number;
  ratiosPerRound: { validate: number[]; mutate: number[] };
}

const SCENARIOS: Scenario[] = [
  { label: 'raw node:https fixed allow (baseline)', mode: 'raw', path: '/' },
  { label: 'raw node:https + JSON.parse of the body (reference: the least any webhook does)', mode: 'raw-parse', path: '/' },
  { label: 'validate route', mode: 'fastify', path: '/validate/require-labels?timeout=10s' },
  { label: 'mutate route (one label added)', mode: 'fastify', path: '/mutate/add-label?timeout=10s' },
];

/** A wrk Lua script that POSTs `body` as JSON, as kube-apiserver does. */
export function luaScript(body: string): string {
  return [
    'wrk.method = "POST"',
    'wrk.headers["Content-Type"] = "application/json"',
    `wrk.body = ${JSON.stringify(body)}`,
    '',
  ].join('\n');
}

/** CPU time (user + system) the process has used, in milliseconds (clock ticks of 10 ms on Linux). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function measure(scenario: Scenario, target: Target, script: string, warmupSeconds: number): Promise<ScenarioResult> {
  const url = `https://127.0.0.1:${target.port}${scenario.path}`;
  const common = { url, script, connections: CONNECTIONS, threads: 1 };
  if (warmupSeconds > 0) await runWrk({ ...common, durationSeconds: warmupSeconds });
  const pid = target.child.pid as number;
  let peakRssMb = rssMb(pid);
  const cpuBefore = cpuMs(pid);
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb(pid))), 250);
  try {
    const result = await runWrk({ ...common, durationSeconds: DURATION_SECONDS });
    const cpuUsPerRequest = ((cpuMs(pid) - cpuBefore) * 1000) / Math.max(1, result.requests);
    return { label: scenario.label, ...result, peakRssMb: Math.max(peakRssMb, rssMb(pid)), cpuUsPerRequest };
  } finally {
    clearInterval(sampler);
  }
}


/** One row per scenario: medians over the rounds (errors summed, RSS the peak of all). */
function summarise(label: string, runs: ScenarioResult[]): ScenarioResult {
  return {
    label,
    requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    requests: runs.reduce((sum, r) => sum + r.requests, 0),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    peakRssMb: Math.max(...runs.map((r) => r.peakRssMb)),
    cpuUsPerRequest: median(runs.map((r) => r.cpuUsPerRequest)),
  };
}

export async function runAdmissionBench(log: (line: string) => void): Promise<AdmissionBenchResult> {
  if (!wrkAvailable()) {
    throw new Error('wrk is not installed: the admission benchmark needs it (Debian/Ubuntu: apt-get install -y wrk)');
  }
  const ca = createTestCa('bench CA');
  const tls = issueServingCert(ca);
  const body = JSON.stringify(podCreateReview());
  const dir = mkdtempSync(path.join(tmpdir(), 'admission-bench-'));
  const script = path.join(dir, 'review.lua');
  writeFileSync(script, luaScript(body));
  const targets = new Map<TargetMode, Target>();
  try {
    for (const mode of ['raw', 'raw-parse', 'fastify'] as const) targets.set(mode, await startTarget(mode, tls));
    const runs = SCENARIOS.map(() => [] as ScenarioResult[]);
    const ratios = { validate: [] as number[], mutate: [] as number[] };
    // Rounds interleave the scenarios, so a machine that slows down mid-run hurts all of them alike.
    for (let round = 0; round < ROUNDS; round++) {
      const roundResults: ScenarioResult[] = [];
      for (const [index, scenario] of SCENARIOS.entries()) {
        log(`round ${round + 1}/${ROUNDS}: ${scenario.label}`);
        const result = await measure(scenario, targets.get(scenario.mode) as Target, script, round === 0 ? WARMUP_SECONDS : 0);
        runs[index]?.push(result);
        roundResults.push(result);
      }
      const [raw, , validate, mutate] = roundResults as [ScenarioResult, ScenarioResult, ScenarioResult, ScenarioResult];
      ratios.validate.push(validate.requestsPerSecond / raw.requestsPerSecond);
      ratios.mutate.push(mutate.requestsPerSecond / raw.requestsPerSecond);
    }
    const scenarios = SCENARIOS.map((scenario, index) => summarise(scenario.label, runs[index] ?? []));
    return {
      body: { bytes: Buffer.byteLength(body) },
      rounds: ROUNDS,
      scenarios,
      baselineRps: (scenarios[0] as ScenarioResult).requestsPerSecond,
      validateRatio: median(ratios.validate),
      mutateRatio: median(ratios.mutate),
      ratiosPerRound: ratios,
    };
  } finally {
    for (const target of targets.values()) await stopTarget(target.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

function verdict(ok: boolean): string {
  return ok ? 'met' : 'MISSED';
}

/** Markdown report of one run, with each target marked met or missed. */
export function admissionReport(result: AdmissionBenchResult): string {
  const lines = [
    `Review body: ${result.body.bytes} bytes. wrk -t1 -c${CONNECTIONS} -d${DURATION_SECONDS}s --latency per scenario, ${result.rounds} interleaved rounds (a ${WARMUP_SECONDS}s warm-up first), HTTP/1.1 keep-alive over TLS. Servers run with \`node ${SERVER_NODE_FLAGS.join(' ')}\`. Figures are medians over the rounds; RSS is the peak.`,
    '',
    '| scenario | req/s | ratio to baseline | p50 ms | p99 ms | peak RSS MB | server CPU µs/req | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...result.scenarios.map(
      (s) =>
        `| ${s.label} | ${s.requestsPerSecond.toFixed(0)} | ${(s.requestsPerSecond / result.baselineRps).toFixed(2)} | ${s.p50Ms.toFixed(2)} | ${s.p99Ms.toFixed(2)} | ${s.peakRssMb.toFixed(1)} | ${s.cpuUsPerRequest.toFixed(0)} | ${s.errors} |`,
    ),
    '',
    `Ratios are the median of the per-round ratios (validate: ${result.ratiosPerRound.validate.map((r) => r.toFixed(2)).join(', ')}; mutate: ${result.ratiosPerRound.mutate.map((r) => r.toFixed(2)).join(', ')}).`,
  ];
  const [, , validate, mutate] = result.scenarios as [ScenarioResult, ScenarioResult, ScenarioResult, ScenarioResult];
  lines.push(
    '',
    `- validate throughput ${result.validateRatio.toFixed(2)}x baseline (target >= ${TARGETS.validateRatio}): ${verdict(result.validateRatio >= TARGETS.validateRatio)}`,
    `- mutate throughput ${result.mutateRatio.toFixed(2)}x baseline (target >= ${TARGETS.mutateRatio}): ${verdict(result.mutateRatio >= TARGETS.mutateRatio)}`,
    `- p99 latency validate ${validate.p99Ms.toFixed(2)} ms, mutate ${mutate.p99Ms.toFixed(2)} ms (target <= ${TARGETS.p99Ms} ms): ${verdict(Math.max(validate.p99Ms, mutate.p99Ms) <= TARGETS.p99Ms)}`,
    `- peak RSS validate ${validate.peakRssMb.toFixed(1)} MB, mutate ${mutate.peakRssMb.toFixed(1)} MB (target <= ${TARGETS.rssMb} MB): ${verdict(Math.max(validate.peakRssMb, mutate.peakRssMb) <= TARGETS.rssMb)}`,
  );
  return lines.join('\n');
}
