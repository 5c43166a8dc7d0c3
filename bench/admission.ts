/**
 * Admission throughput and latency of the servers users run against the reference (raw
 * node:https with the same TLS options that reads the body, JSON.parses it and answers an allow
 * with the review's uid: the least any webhook does), measured in the same run with the rounds
 * interleaved, because only ratios within one run mean anything on these shared machines. The
 * servers (bench/admission-servers.ts): the shipped binary with a policy file of built-in rules,
 * a second build of it (BENCH_BASELINE), an `init` project and, when asked for, the in-process
 * target. Per round and scenario: wrk, closed loop, 32 keep-alive connections (throughput, p99 under
 * saturation, peak RSS, CPU per review); then an open-loop pacer at a realistic rate (p99 with
 * queueing visible). BENCH_CPU_PROF=DIR runs every server under --cpu-prof and says where each
 * one's CPU per review goes in the closed-loop windows.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkAnswers, planFromEnvironment, startServers, stopServers, type ServerKey, type ServerUnderTest } from './admission-servers.js';
import { runOpenLoop, type OpenLoopResult } from './open-loop.js';
import { podCreateReview } from './pod-review.js';
import { addScaled, frameFunction, frameOrigin, monotonicUs, scaleToRunTime, selfTimeInWindow, type CpuProfile, type ProfileWindow } from './review-profile.js';
import { median } from './stats.js';
import { rssMb } from './target-process.js';
import { runWrk, wrkAvailable, type WrkResult } from './wrk.js';

export const CONNECTIONS = 32;
export const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
export const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 1000);
export const PACED_SECONDS = Number(process.env.BENCH_PACED_DURATION ?? 10);
/** Enough that a pause of the server never leaves a due request without a connection for long. */
export const PACED_MAX_CONNECTIONS = 64;

/** The admission targets, every one relative to the reference measured in the same run; judged on the shipped binary. */
export const TARGETS = { validateRatio: 0.8, mutateRatio: 0.6, p99Ratio: 1.5, pacedP99ExtraMs: 1, rssExtraMb: 25 };

export type Route = 'reference' | 'validate' | 'mutate';

interface Scenario {
  label: string;
  server: ServerUnderTest;
  route: Route;
  path: string;
}

export interface ScenarioResult extends WrkResult {
  label: string;
  server: ServerKey;
  route: Route;
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
  /** The main thread's own run time per answered request (schedstat): the part of the CPU the profile sees. */
  mainThreadUsPerRequest: number;
  paced: OpenLoopResult;
}

/** One scenario against the reference of the same round. */
export interface RoundComparison {
  throughputRatio: number;
  p99Ratio: number;
  pacedP99ExtraMs: number;
  /** Server CPU µs per review over the reference's. */
  cpuRatio: number;
}

export interface ScenarioComparison {
  label: string;
  server: ServerKey;
  route: Route;
  /** Medians of the per-round comparisons. */
  median: RoundComparison;
  perRound: RoundComparison[];
}

/** This checkout's binary against the baseline's, per route, round by round. */
export interface BuildRound {
  /** This build's req/s over the baseline's. */
  throughputRatio: number;
  /** This build's server CPU µs per review over the baseline's. */
  cpuRatio: number;
  p99Ratio: number;
}

export interface BuildComparison {
  route: 'validate' | 'mutate';
  median: BuildRound;
  perRound: BuildRound[];
}

/** Self time per review (µs) in the closed-loop windows of one scenario, from its server's profile. */
export interface ScenarioProfile {
  label: string;
  server: ServerKey;
  route: Route;
  /** Reviews answered in the windows. */
  reviews: number;
  byOrigin: Record<string, number>;
  byFunction: Record<string, number>;
}

export interface AdmissionBenchResult {
  body: { bytes: number };
  rounds: number;
  grouping: string;
  servers: { key: ServerKey; label: string; paths: ServerUnderTest['paths'] }[];
  /** Medians over the rounds, the reference first. */
  scenarios: ScenarioResult[];
  comparisons: ScenarioComparison[];
  /** Empty without BENCH_BASELINE. */
  builds: BuildComparison[];
  /** With BENCH_CPU_PROF only. */
  profiles: ScenarioProfile[] | undefined;
}

/** A wrk Lua script that POSTs `body` as JSON, as kube-apiserver does. */
export function luaScript(body: string): string {
  return [
    'wrk.method = "POST"',
    'wrk.headers["Content-Type"] = "application/json"',
    `wrk.body = ${JSON.stringify(body)}`,
    '',
  ].join('\n');
}

/** CPU time (user + system) the process has used, all its threads, in milliseconds (clock ticks of 10 ms on Linux). */
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

/** A closed-loop measurement's window and the main thread's run time in it (µs), for the profile. */
interface MeasuredWindow {
  window: ProfileWindow;
  requests: number;
  runUs: number;
}

type ClosedLoopResult = Omit<ScenarioResult, 'paced'> & { measured: MeasuredWindow };

async function closedLoop(scenario: Scenario, script: string, warmupSeconds: number): Promise<ClosedLoopResult> {
  const url = `https://127.0.0.1:${scenario.server.port}${scenario.path}`;
  const common = { url, script, connections: CONNECTIONS, threads: 1 };
  if (warmupSeconds > 0) await runWrk({ ...common, durationSeconds: warmupSeconds });
  const pid = scenario.server.child.pid as number;
  let peakRssMb = rssMb(pid);
  const cpuBefore = cpuMs(pid);
  const schedBefore = schedNs(pid);
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb(pid))), 250);
  const fromUs = monotonicUs();
  try {
    const result = await runWrk({ ...common, durationSeconds: DURATION_SECONDS });
    const window = { fromUs, toUs: monotonicUs() };
    const requests = Math.max(1, result.requests);
    const cpuUsPerRequest = ((cpuMs(pid) - cpuBefore) * 1000) / requests;
    const schedAfter = schedNs(pid);
    const cpuWaitUsPerRequest = (schedAfter.waitNs - schedBefore.waitNs) / 1000 / requests;
    const runUs = (schedAfter.runNs - schedBefore.runNs) / 1000;
    const { label, route } = scenario;
    const measured = { window, requests: result.requests, runUs };
    return { label, server: scenario.server.key, route, ...result, peakRssMb: Math.max(peakRssMb, rssMb(pid)), cpuUsPerRequest, cpuWaitUsPerRequest, mainThreadUsPerRequest: runUs / requests, measured };
  } finally {
    clearInterval(sampler);
  }
}

function paced(scenario: Scenario, body: string): Promise<OpenLoopResult> {
  return runOpenLoop({
    port: scenario.server.port,
    path: scenario.path,
    body,
    ratePerSecond: PACED_RATE,
    durationSeconds: PACED_SECONDS,
    warmupSeconds: 1,
    maxConnections: PACED_MAX_CONNECTIONS,
  });
}

/** One row per scenario: medians over the rounds (errors summed, RSS the peak of all). */
function summarise(runs: ScenarioResult[]): ScenarioResult {
  const of = (pick: (r: ScenarioResult) => number): number => median(runs.map(pick));
  const first = runs[0] as ScenarioResult;
  return {
    label: first.label,
    server: first.server,
    route: first.route,
    requestsPerSecond: of((r) => r.requestsPerSecond),
    p50Ms: of((r) => r.p50Ms),
    p99Ms: of((r) => r.p99Ms),
    requests: runs.reduce((sum, r) => sum + r.requests, 0),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    peakRssMb: Math.max(...runs.map((r) => r.peakRssMb)),
    cpuUsPerRequest: of((r) => r.cpuUsPerRequest),
    cpuWaitUsPerRequest: of((r) => r.cpuWaitUsPerRequest),
    mainThreadUsPerRequest: of((r) => r.mainThreadUsPerRequest),
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

export function compare(route: ScenarioResult, reference: ScenarioResult): RoundComparison {
  return {
    throughputRatio: route.requestsPerSecond / reference.requestsPerSecond,
    p99Ratio: route.p99Ms / reference.p99Ms,
    pacedP99ExtraMs: route.paced.p99Ms - reference.paced.p99Ms,
    cpuRatio: route.cpuUsPerRequest / reference.cpuUsPerRequest,
  };
}

export function medianComparison(rounds: readonly RoundComparison[]): RoundComparison {
  return {
    throughputRatio: median(rounds.map((r) => r.throughputRatio)),
    p99Ratio: median(rounds.map((r) => r.p99Ratio)),
    pacedP99ExtraMs: median(rounds.map((r) => r.pacedP99ExtraMs)),
    cpuRatio: median(rounds.map((r) => r.cpuRatio)),
  };
}

/** This build's scenario over the baseline's of the same round. */
export function compareBuilds(build: ScenarioResult, baseline: ScenarioResult): BuildRound {
  return {
    throughputRatio: build.requestsPerSecond / baseline.requestsPerSecond,
    cpuRatio: build.cpuUsPerRequest / baseline.cpuUsPerRequest,
    p99Ratio: build.p99Ms / baseline.p99Ms,
  };
}

/** The reference, then each server's validate and mutate paths. */
function scenariosOf(servers: readonly ServerUnderTest[]): Scenario[] {
  return servers.flatMap((server): Scenario[] =>
    server.paths
      ? [
          { label: `${server.label}: validate`, server, route: 'validate', path: server.paths.validate },
          { label: `${server.label}: mutate (one label added)`, server, route: 'mutate', path: server.paths.mutate },
        ]
      : [{ label: server.label, server, route: 'reference', path: '/' }],
  );
}

/**
 * The order of round `round` (0-based): as listed in even rounds, reversed in odd ones, so no
 * scenario always follows the same one (the machine drifts within a round, and a build measured
 * always first or always last would carry that drift).
 */
export function roundOrder<T>(items: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...items] : [...items].reverse();
}

/** Per scenario, its profile's self time in its closed-loop windows per review answered there, scaled to the main thread's run time. */
function profilesOf(scenarios: readonly Scenario[], windows: Map<string, MeasuredWindow[]>): ScenarioProfile[] {
  const loaded = new Map<string, CpuProfile>();
  const result: ScenarioProfile[] = [];
  for (const scenario of scenarios) {
    const file = scenario.server.profileFile;
    if (!file) continue;
    if (!loaded.has(file)) loaded.set(file, JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
    const profile = loaded.get(file) as CpuProfile;
    const measured = windows.get(scenario.label) ?? [];
    const reviews = measured.reduce((sum, m) => sum + m.requests, 0);
    const byOrigin = new Map<string, number>();
    const byFunction = new Map<string, number>();
    for (const { window, runUs } of measured) {
      const origins = selfTimeInWindow(profile, window, frameOrigin);
      const factor = scaleToRunTime(origins, runUs) / Math.max(1, reviews);
      addScaled(byOrigin, origins, factor);
      addScaled(byFunction, selfTimeInWindow(profile, window, frameFunction), factor);
    }
    // Functions under 0.01 µs per review say nothing and would fill the raw results.
    const kept = [...byFunction].filter(([, us]) => us >= 0.01);
    result.push({ label: scenario.label, server: scenario.server.key, route: scenario.route, reviews, byOrigin: Object.fromEntries(byOrigin), byFunction: Object.fromEntries(kept) });
  }
  return result;
}

export async function runAdmissionBench(log: (line: string) => void): Promise<AdmissionBenchResult> {
  if (!wrkAvailable()) {
    throw new Error('wrk is not installed: the admission benchmark needs it (Debian/Ubuntu: apt-get install -y wrk)');
  }
  const review = podCreateReview();
  const uid = (review.request as { uid: string }).uid;
  const body = JSON.stringify(review);
  const dir = mkdtempSync(path.join(tmpdir(), 'admission-bench-'));
  const script = path.join(dir, 'review.lua');
  writeFileSync(script, luaScript(body));
  const plan = planFromEnvironment(process.env, dir);
  let servers: ServerUnderTest[] = [];
  try {
    servers = await startServers(plan, log);
    for (const server of servers) await checkAnswers(server, body, uid);
    const scenarios = scenariosOf(servers);
    const runs = new Map<string, ScenarioResult[]>(scenarios.map((s) => [s.label, []]));
    const windows = new Map<string, MeasuredWindow[]>(scenarios.map((s) => [s.label, []]));
    const perRound = new Map<string, RoundComparison[]>(scenarios.map((s) => [s.label, []]));
    const buildRounds = { validate: [] as BuildRound[], mutate: [] as BuildRound[] };
    // Rounds interleave the scenarios, so a machine that slows down mid-run hurts all of them alike.
    for (let round = 0; round < ROUNDS; round++) {
      const order = roundOrder(scenarios, round);
      const closed = new Map<string, ClosedLoopResult>();
      for (const scenario of order) {
        log(`round ${round + 1}/${ROUNDS}: ${scenario.label}, wrk -c${CONNECTIONS}`);
        const result = await closedLoop(scenario, script, round === 0 ? WARMUP_SECONDS : 0);
        closed.set(scenario.label, result);
        windows.get(scenario.label)?.push(result.measured);
      }
      const results = new Map<string, ScenarioResult>();
      for (const scenario of order) {
        log(`round ${round + 1}/${ROUNDS}: ${scenario.label}, ${PACED_RATE}/s paced`);
        const { measured: _, ...closedResult } = closed.get(scenario.label) as ClosedLoopResult;
        const result = { ...closedResult, paced: await paced(scenario, body) };
        runs.get(scenario.label)?.push(result);
        results.set(scenario.label, result);
      }
      const reference = results.get((scenarios[0] as Scenario).label) as ScenarioResult;
      for (const scenario of scenarios.slice(1)) perRound.get(scenario.label)?.push(compare(results.get(scenario.label) as ScenarioResult, reference));
      for (const route of ['validate', 'mutate'] as const) {
        const of = (key: ServerKey): ScenarioResult | undefined => [...results.values()].find((r) => r.server === key && r.route === route);
        const build = of('binary');
        const baseline = of('baseline');
        if (build && baseline) buildRounds[route].push(compareBuilds(build, baseline));
      }
    }
    await stopServers(servers);
    const comparisons = scenarios.slice(1).map((s) => ({ label: s.label, server: s.server.key, route: s.route, median: medianComparison(perRound.get(s.label) ?? []), perRound: perRound.get(s.label) ?? [] }));
    const builds = (['validate', 'mutate'] as const)
      .filter((route) => buildRounds[route].length > 0)
      .map((route) => {
        const rounds = buildRounds[route];
        return { route, perRound: rounds, median: { throughputRatio: median(rounds.map((r) => r.throughputRatio)), cpuRatio: median(rounds.map((r) => r.cpuRatio)), p99Ratio: median(rounds.map((r) => r.p99Ratio)) } };
      });
    return {
      body: { bytes: Buffer.byteLength(body) },
      rounds: ROUNDS,
      grouping: plan.grouping,
      servers: servers.map((s) => ({ key: s.key, label: s.label, paths: s.paths })),
      scenarios: scenarios.map((s) => summarise(runs.get(s.label) ?? [])),
      comparisons,
      builds,
      profiles: plan.profileDir ? profilesOf(scenarios, windows) : undefined,
    };
  } finally {
    await stopServers(servers);
    rmSync(dir, { recursive: true, force: true });
  }
}
