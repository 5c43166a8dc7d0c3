/**
 * Admission throughput and latency against the reference (raw node:https with the same TLS
 * options that reads the body, JSON.parses it and answers an allow with the review's uid: the
 * least any webhook does), measured in the same run with the rounds interleaved, because only
 * ratios within one run mean anything on these shared machines. Per round and scenario: wrk,
 * closed loop, 32 keep-alive connections (throughput, p99 under saturation, peak RSS, CPU per
 * review); then an open-loop pacer at a realistic rate (p99 with queueing visible).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestCa, issueServingCert } from '../test/support/tls/test-certs.js';
import { runOpenLoop, type OpenLoopResult } from './open-loop.js';
import { podCreateReview } from './pod-review.js';
import { median } from './stats.js';
import type { TargetMode } from './admission-target.js';
import { rssMb, SERVER_NODE_FLAGS, startTarget, stopTarget, type Target } from './target-process.js';
import { runWrk, wrkAvailable, type WrkResult } from './wrk.js';

const CONNECTIONS = 32;
const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 1000);
const PACED_SECONDS = Number(process.env.BENCH_PACED_DURATION ?? 10);
/** Enough that a pause of the server never leaves a due request without a connection for long. */
const PACED_MAX_CONNECTIONS = 64;

/** Issue 14's targets, every one relative to the reference measured in the same run. */
export const TARGETS = { validateRatio: 0.8, mutateRatio: 0.6, p99Ratio: 1.5, pacedP99ExtraMs: 1, rssExtraMb: 25 };

interface Scenario {
  label: string;
  mode: TargetMode;
  path: string;
}

export interface ScenarioResult extends WrkResult {
  label: string;
  peakRssMb: number;
  /** Server CPU time per answered request: less sensitive to other load on the machine than req/s (but it too grows under contention). */
  cpuUsPerRequest: number;
  /**
   * Time per answered request the server's main thread was ready to run but waited for a CPU
   * (/proc/<pid>/schedstat): other load on the machine. The server is saturated by wrk, so its
   * main thread is either running or waiting for a CPU; a large figure here means req/s measured
   * the machine, not the server.
   */
  cpuWaitUsPerRequest: number;
  paced: OpenLoopResult;
}

/** Per round, each of validate and mutate against the reference of the same round. */
interface RoundComparison {
  throughputRatio: number;
  p99Ratio: number;
  pacedP99ExtraMs: number;
}

export interface AdmissionBenchResult {
  body: { bytes: number };
  rounds: number;
  /** Medians over the rounds: reference, validate, mutate. */
  scenarios: ScenarioResult[];
  /** Medians of the per-round comparisons. */
  validate: RoundComparison;
  mutate: RoundComparison;
  perRound: { validate: RoundComparison[]; mutate: RoundComparison[] };
}

const SCENARIOS: Scenario[] = [
  { label: 'reference: raw node:https, JSON.parse, allow echoing the uid', mode: 'reference', path: '/' },
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

/** Nanoseconds the process's main thread has run, and has waited runnable for a CPU. */
function schedNs(pid: number): { runNs: number; waitNs: number } {
  const [runNs, waitNs] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ').map(Number);
  return { runNs: runNs ?? 0, waitNs: waitNs ?? 0 };
}

async function closedLoop(scenario: Scenario, target: Target, script: string, warmupSeconds: number): Promise<Omit<ScenarioResult, 'paced'>> {
  const url = `https://127.0.0.1:${target.port}${scenario.path}`;
  const common = { url, script, connections: CONNECTIONS, threads: 1 };
  if (warmupSeconds > 0) await runWrk({ ...common, durationSeconds: warmupSeconds });
  const pid = target.child.pid as number;
  let peakRssMb = rssMb(pid);
  const cpuBefore = cpuMs(pid);
  const schedBefore = schedNs(pid);
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb(pid))), 250);
  try {
    const result = await runWrk({ ...common, durationSeconds: DURATION_SECONDS });
    const requests = Math.max(1, result.requests);
    const cpuUsPerRequest = ((cpuMs(pid) - cpuBefore) * 1000) / requests;
    const cpuWaitUsPerRequest = (schedNs(pid).waitNs - schedBefore.waitNs) / 1000 / requests;
    return { label: scenario.label, ...result, peakRssMb: Math.max(peakRssMb, rssMb(pid)), cpuUsPerRequest, cpuWaitUsPerRequest };
  } finally {
    clearInterval(sampler);
  }
}

function paced(scenario: Scenario, target: Target, body: string): Promise<OpenLoopResult> {
  return runOpenLoop({
    port: target.port,
    path: scenario.path,
    body,
    ratePerSecond: PACED_RATE,
    durationSeconds: PACED_SECONDS,
    warmupSeconds: 1,
    maxConnections: PACED_MAX_CONNECTIONS,
  });
}

/** One row per scenario: medians over the rounds (errors summed, RSS the peak of all). */
function summarise(label: string, runs: ScenarioResult[]): ScenarioResult {
  const of = (pick: (r: ScenarioResult) => number): number => median(runs.map(pick));
  return {
    label,
    requestsPerSecond: of((r) => r.requestsPerSecond),
    p50Ms: of((r) => r.p50Ms),
    p99Ms: of((r) => r.p99Ms),
    requests: runs.reduce((sum, r) => sum + r.requests, 0),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    peakRssMb: Math.max(...runs.map((r) => r.peakRssMb)),
    cpuUsPerRequest: of((r) => r.cpuUsPerRequest),
    cpuWaitUsPerRequest: of((r) => r.cpuWaitUsPerRequest),
    paced: {
      sent: runs.reduce((sum, r) => sum + r.paced.sent, 0),
      ok: runs.reduce((sum, r) => sum + r.paced.ok, 0),
      errors: runs.reduce((sum, r) => sum + r.paced.errors, 0),
      achievedPerSecond: of((r) => r.paced.achievedPerSecond),
      p50Ms: of((r) => r.paced.p50Ms),
      p99Ms: of((r) => r.paced.p99Ms),
      maxMs: Math.max(...runs.map((r) => r.paced.maxMs)),
    },
  };
}

function compare(route: ScenarioResult, reference: ScenarioResult): RoundComparison {
  return {
    throughputRatio: route.requestsPerSecond / reference.requestsPerSecond,
    p99Ratio: route.p99Ms / reference.p99Ms,
    pacedP99ExtraMs: route.paced.p99Ms - reference.paced.p99Ms,
  };
}

function medianComparison(rounds: RoundComparison[]): RoundComparison {
  return {
    throughputRatio: median(rounds.map((r) => r.throughputRatio)),
    p99Ratio: median(rounds.map((r) => r.p99Ratio)),
    pacedP99ExtraMs: median(rounds.map((r) => r.pacedP99ExtraMs)),
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
    for (const mode of ['reference', 'fastify'] as const) targets.set(mode, await startTarget(mode, tls));
    const runs = SCENARIOS.map(() => [] as ScenarioResult[]);
    const perRound = { validate: [] as RoundComparison[], mutate: [] as RoundComparison[] };
    // Rounds interleave the scenarios, so a machine that slows down mid-run hurts all of them alike.
    for (let round = 0; round < ROUNDS; round++) {
      const closed = [];
      for (const scenario of SCENARIOS) {
        log(`round ${round + 1}/${ROUNDS}: ${scenario.label}, wrk -c${CONNECTIONS}`);
        closed.push(await closedLoop(scenario, targets.get(scenario.mode) as Target, script, round === 0 ? WARMUP_SECONDS : 0));
      }
      const roundResults: ScenarioResult[] = [];
      for (const [index, scenario] of SCENARIOS.entries()) {
        log(`round ${round + 1}/${ROUNDS}: ${scenario.label}, ${PACED_RATE}/s paced`);
        const result = { ...(closed[index] as Omit<ScenarioResult, 'paced'>), paced: await paced(scenario, targets.get(scenario.mode) as Target, body) };
        runs[index]?.push(result);
        roundResults.push(result);
      }
      const [reference, validate, mutate] = roundResults as [ScenarioResult, ScenarioResult, ScenarioResult];
      perRound.validate.push(compare(validate, reference));
      perRound.mutate.push(compare(mutate, reference));
    }
    return {
      body: { bytes: Buffer.byteLength(body) },
      rounds: ROUNDS,
      scenarios: SCENARIOS.map((scenario, index) => summarise(scenario.label, runs[index] ?? [])),
      validate: medianComparison(perRound.validate),
      mutate: medianComparison(perRound.mutate),
      perRound,
    };
  } finally {
    for (const target of targets.values()) await stopTarget(target.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

function verdict(ok: boolean): string {
  return ok ? 'met' : 'MISSED';
}

const fixed = (values: readonly number[], digits = 2): string => values.map((v) => v.toFixed(digits)).join(', ');

/** Markdown report of one run, with each target marked met or missed. */
export function admissionReport(result: AdmissionBenchResult): string {
  const [reference, validate, mutate] = result.scenarios as [ScenarioResult, ScenarioResult, ScenarioResult];
  const lines = [
    `Review body: ${result.body.bytes} bytes. Per round and scenario: wrk -t1 -c${CONNECTIONS} -d${DURATION_SECONDS}s --latency (closed loop), then ${PACED_RATE} reviews/s paced for ${PACED_SECONDS} s (open loop, latency from the moment each was due, up to ${PACED_MAX_CONNECTIONS} keep-alive connections, 1 s uncounted first); ${result.rounds} interleaved rounds (a ${WARMUP_SECONDS} s wrk warm-up first), HTTP/1.1 keep-alive over TLS. Servers run with \`node ${SERVER_NODE_FLAGS.join(' ')}\`, the webhook server with production defaults (metrics on, log level info, to /dev/null). Figures are medians over the rounds; RSS is the peak.`,
    '',
    `| scenario | req/s (-c${CONNECTIONS}) | ratio to reference | p50 ms | p99 ms | p99 ratio | paced p50 ms | paced p99 ms | paced max ms | peak RSS MB | server CPU µs/req | server waiting for a CPU µs/req | errors (wrk / paced) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...result.scenarios.map(
      (s) =>
        `| ${s.label} | ${s.requestsPerSecond.toFixed(0)} | ${(s.requestsPerSecond / reference.requestsPerSecond).toFixed(2)} | ${s.p50Ms.toFixed(2)} | ${s.p99Ms.toFixed(2)} | ${(s.p99Ms / reference.p99Ms).toFixed(2)} | ${s.paced.p50Ms.toFixed(2)} | ${s.paced.p99Ms.toFixed(2)} | ${s.paced.maxMs.toFixed(1)} | ${s.peakRssMb.toFixed(1)} | ${s.cpuUsPerRequest.toFixed(0)} | ${s.cpuWaitUsPerRequest.toFixed(0)} | ${s.errors} / ${s.paced.errors} |`,
    ),
    '',
    `Per round (each against the reference of the same round): throughput ratio validate ${fixed(result.perRound.validate.map((r) => r.throughputRatio))}, mutate ${fixed(result.perRound.mutate.map((r) => r.throughputRatio))}; p99 ratio validate ${fixed(result.perRound.validate.map((r) => r.p99Ratio))}, mutate ${fixed(result.perRound.mutate.map((r) => r.p99Ratio))}; paced p99 minus the reference's, ms: validate ${fixed(result.perRound.validate.map((r) => r.pacedP99ExtraMs))}, mutate ${fixed(result.perRound.mutate.map((r) => r.pacedP99ExtraMs))}.`,
    '',
    `- validate throughput ${result.validate.throughputRatio.toFixed(2)}x the reference (target >= ${TARGETS.validateRatio}): ${verdict(result.validate.throughputRatio >= TARGETS.validateRatio)}`,
    `- mutate throughput ${result.mutate.throughputRatio.toFixed(2)}x the reference (target >= ${TARGETS.mutateRatio}): ${verdict(result.mutate.throughputRatio >= TARGETS.mutateRatio)}`,
    `- p99 at ${CONNECTIONS} connections: validate ${result.validate.p99Ratio.toFixed(2)}x, mutate ${result.mutate.p99Ratio.toFixed(2)}x the reference's (target <= ${TARGETS.p99Ratio}x): ${verdict(Math.max(result.validate.p99Ratio, result.mutate.p99Ratio) <= TARGETS.p99Ratio)}`,
    `- p99 at ${PACED_RATE}/s paced: validate ${signed(result.validate.pacedP99ExtraMs)} ms, mutate ${signed(result.mutate.pacedP99ExtraMs)} ms against the reference's (target <= +${TARGETS.pacedP99ExtraMs} ms): ${verdict(Math.max(result.validate.pacedP99ExtraMs, result.mutate.pacedP99ExtraMs) <= TARGETS.pacedP99ExtraMs)}`,
    `- peak RSS under load: validate/mutate server ${Math.max(validate.peakRssMb, mutate.peakRssMb).toFixed(1)} MB, reference ${reference.peakRssMb.toFixed(1)} MB (target <= reference + ${TARGETS.rssExtraMb} MB): ${verdict(Math.max(validate.peakRssMb, mutate.peakRssMb) <= reference.peakRssMb + TARGETS.rssExtraMb)}`,
  ];
  return lines.join('\n');
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(2)}`;
}
