/**
 * `npm run hostile`: the leak check. The webhook server (production connection limits) runs in a
 * child process with --expose-gc; a steady normal load runs throughout; after a quiet phase,
 * rounds of hostile clients (idle keep-alive floods, slow headers, slow bodies, silence after the
 * handshake, oversized headers and bodies, resets mid-request, abandoned handshakes) and fuzzed
 * bodies hit it. Reports normal requests served and failed, normal latency before and during the
 * attack, memory after GC at the start and the end, and the sockets still open at the end.
 * Markdown on stdout, raw JSON in bench/results/.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import fc from 'fast-check';
import { DEFAULT_CONNECTION_LIMITS } from '../src/server/connections.js';
import { BODY_LIMIT_BYTES } from '../src/server/request-errors.js';
import { sleep, withTimeout } from '../src/util/abort.js';
import { checkAnswer, rawBodies } from '../test/support/server/fuzz-bodies.js';
import { hostileKinds, IdleConnections, judge, type HostileKind, type HostileOutcome, type Target } from '../test/support/server/hostile-clients.js';
import { request } from '../test/support/server/server-harness.js';
import { createTestCa, issueServingCert, TEST_SERVER_NAME } from '../test/support/tls/test-certs.js';
import { rssMb, SERVER_NODE_FLAGS, startTarget, stopTarget } from './target-process.js';
import type { TargetStats } from './admission-target.js';
import { NormalLoad } from './normal-load.js';
import { median, percentile } from './stats.js';

const knob = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const SETTINGS = {
  rounds: knob('HOSTILE_ROUNDS', 5),
  idlePerRound: knob('HOSTILE_IDLE', 1500),
  perKindPerRound: knob('HOSTILE_PER_KIND', 20),
  fuzzPerRound: knob('HOSTILE_FUZZ', 200),
  quietSeconds: knob('HOSTILE_QUIET', 10),
  seed: knob('HOSTILE_SEED', 42),
  /** The server's connection cap; the production default unless set. */
  maxConnections: knob('HOSTILE_MAX_CONNECTIONS', DEFAULT_CONNECTION_LIMITS.maxConnections),
  loadWorkers: 4,
  loadPauseMs: 20,
};
const WARM_UP_MS = 5_000;
/** On top of each limit before a hostile connection counts as not cut off (a noisy 2-core machine). */
const SLACK_MS = 5_000;

interface KindFigures {
  name: string;
  expected: string;
  connections: number;
  asExpected: number;
  closedAfterMs: number[];
  problems: string[];
}

interface RoundFigures {
  idleOpened: number;
  /** Idle connections the server dropped at its connection cap before they became idle. */
  idleRefused: number;
  idleCutEarly: number;
  fuzzSent: number;
  fuzz: FuzzFigures;
  /** The server once the round's hostile clients are gone (the normal load still running). */
  after?: TargetStats;
}

function askStats(child: ChildProcess): Promise<TargetStats> {
  return withTimeout(10_000, undefined, async (signal) => {
    const reply = once(child, 'message', { signal }) as Promise<[TargetStats]>;
    child.send({ type: 'stats' });
    for (;;) {
      const [message] = await reply;
      if (message.type === 'stats') return message;
    }
  });
}

/** Polls the server until `settled(open connections)`; the last stats seen at the deadline. */
async function statsOnceSettled(child: ChildProcess, settled: (openConnections: number) => boolean, deadlineMs: number): Promise<TargetStats> {
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    const stats = await askStats(child);
    if (settled(stats.openConnections ?? Number.NaN) || performance.now() > deadline) return stats;
    await sleep(200);
  }
}

interface FuzzFigures {
  /** Answers that broke the contract (neither a valid review nor a 4xx with a reason). */
  problems: string[];
  /** Requests that got no answer at all: a new connection dropped at the connection cap. */
  transportErrors: string[];
}

/**
 * Sends fuzzed bodies over two keep-alive connections. fastify closes the connection after a body
 * it cannot parse, so these clients reconnect often, and at the cap a new connection is dropped.
 */
async function sendFuzz(target: Target, bodies: readonly Buffer[]): Promise<FuzzFigures> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 2 });
  const figures: FuzzFigures = { problems: [], transportErrors: [] };
  const paths = ['/validate/require-labels?timeout=5s', '/mutate/add-label?timeout=5s'];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const index = next++;
      const body = bodies[index] as Buffer;
      try {
        const reply = await request(target.port, paths[index % 2] as string, undefined, { ca: target.caPem, raw: body, agent });
        const problem = checkAnswer(body, reply.status, reply.json, reply.text);
        if (problem) figures.problems.push(problem);
      } catch (error) {
        figures.transportErrors.push((error as Error).message);
      }
    }
  };
  try {
    await Promise.all([worker(), worker()]);
  } finally {
    agent.destroy();
  }
  return figures;
}

async function hostileRound(target: Target, kinds: readonly HostileKind[], figures: KindFigures[], fuzzBodies: readonly Buffer[]): Promise<RoundFigures> {
  const idle = new IdleConnections();
  try {
    // The hostile clients connect first, while there is room: at the connection cap the server
    // would rightly drop them before they could misbehave. The idle flood then fills the cap
    // while the slow ones are still at work.
    const launched = kinds.flatMap((kind, index) => Array.from({ length: SETTINGS.perKindPerRound }, () => ({ index, kind, attack: kind.start(target) })));
    const judged = launched.map(({ index, kind, attack }) =>
      attack.outcome.then(
        (outcome: HostileOutcome) => record(figures[index] as KindFigures, judge(kind, outcome), outcome.closedAfterMs),
        (error: Error) => record(figures[index] as KindFigures, error.message, undefined),
      ),
    );
    await Promise.allSettled(launched.map(({ attack }) => attack.engaged));
    const fuzzing = sendFuzz(target, fuzzBodies);
    await idle.open(target, SETTINGS.idlePerRound);
    await Promise.all(judged);
    const fuzz = await fuzzing;
    return { idleOpened: idle.size, idleRefused: idle.refused, idleCutEarly: idle.closedByServer(), fuzzSent: fuzzBodies.length, fuzz };
  } finally {
    await idle.close(10_000);
  }
}

function record(figures: KindFigures, problem: string | undefined, closedAfterMs: number | undefined): void {
  figures.connections += 1;
  if (closedAfterMs !== undefined) figures.closedAfterMs.push(closedAfterMs);
  if (problem === undefined) figures.asExpected += 1;
  else if (figures.problems.length < 3) figures.problems.push(problem);
}

export async function runHostileBench(log: (line: string) => void) {
  const ca = createTestCa('hostile bench CA');
  const serving = issueServingCert(ca);
  const limits = { ...DEFAULT_CONNECTION_LIMITS, maxConnections: SETTINGS.maxConnections };
  const server = await startTarget('fastify', serving, {
    nodeFlags: ['--expose-gc', ...SERVER_NODE_FLAGS],
    connectionLimits: { maxConnections: limits.maxConnections },
  });
  const target: Target = { port: server.port, caPem: ca.certPem, serverName: TEST_SERVER_NAME };
  const pid = server.child.pid as number;
  const kinds = hostileKinds({ ...limits, bodyLimitBytes: BODY_LIMIT_BYTES }, SLACK_MS);
  const kindFigures: KindFigures[] = kinds.map((kind) => ({
    name: kind.name,
    expected: kind.expected ? `${kind.expected.status}` : 'close',
    connections: 0,
    asExpected: 0,
    closedAfterMs: [],
    problems: [],
  }));
  const fuzzBodies = fc.sample(rawBodies, { numRuns: SETTINGS.rounds * SETTINGS.fuzzPerRound, seed: SETTINGS.seed });
  const load = new NormalLoad(target.port, target.caPem, { workers: SETTINGS.loadWorkers, pauseMs: SETTINGS.loadPauseMs });
  let peakRssMb = 0;
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb(pid))), 250);
  try {
    // Memory is measured from the end of a warm-up under normal load: compiled code and lazily
    // built structures are there by then and are not growth.
    load.phase = 'warm-up';
    load.start();
    await sleep(WARM_UP_MS);
    const start = await askStats(server.child);
    log(`server pid ${pid}, RSS after GC ${(start.rssBytes / 2 ** 20).toFixed(1)} MB after the warm-up; quiet phase ${SETTINGS.quietSeconds} s under normal load`);
    load.phase = 'before';
    await sleep(SETTINGS.quietSeconds * 1000);
    const rounds: RoundFigures[] = [];
    load.phase = 'during';
    for (let round = 0; round < SETTINGS.rounds; round++) {
      log(`round ${round + 1}/${SETTINGS.rounds}: ${SETTINGS.idlePerRound} idle, ${kinds.length} kinds x ${SETTINGS.perKindPerRound}, ${SETTINGS.fuzzPerRound} fuzzed bodies`);
      const figures = await hostileRound(target, kinds, kindFigures, fuzzBodies.slice(round * SETTINGS.fuzzPerRound, (round + 1) * SETTINGS.fuzzPerRound));
      // Once the server has seen every hostile socket close; only the normal load's may stay.
      rounds.push({ ...figures, after: await statsOnceSettled(server.child, (open) => open <= SETTINGS.loadWorkers, 10_000) });
    }
    load.phase = 'after';
    await sleep(SETTINGS.quietSeconds * 1000);
    await load.stop();
    const end = await statsOnceSettled(server.child, (open) => open === 0, 10_000);
    const openAtEnd = end.openConnections;
    return { node: process.version, settings: SETTINGS, limits, start, end, openAtEnd, peakRssMb, rounds, kinds: kindFigures, load: Object.fromEntries(load.phases) };
  } finally {
    clearInterval(sampler);
    await load.stop();
    await stopTarget(server.child);
  }
}

type HostileBenchResult = Awaited<ReturnType<typeof runHostileBench>>;

const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
const ms = (value: number): string => (Number.isNaN(value) ? '-' : value.toFixed(1));

/** Markdown report of one run. */
export function hostileReport(result: HostileBenchResult): string {
  const { settings, rounds, kinds, load } = result;
  const hostileConnections = rounds.reduce((sum, r) => sum + r.idleOpened + r.idleRefused, 0) + kinds.reduce((sum, k) => sum + k.connections, 0);
  const fuzzSent = rounds.reduce((sum, r) => sum + r.fuzzSent, 0);
  const fuzzProblems = rounds.flatMap((r) => r.fuzz.problems);
  const fuzzTransportErrors = rounds.flatMap((r) => r.fuzz.transportErrors);
  const phase = (name: string) => load[name] ?? { served: 0, failed: 0, latenciesMs: [], failures: [] };
  const phases = ['before', 'during', 'after'].map((name) => ({ name, ...phase(name) }));
  const lines = [
    `Node ${result.node}. ${settings.rounds} rounds, each: ${settings.perKindPerRound} connections of each of ${kinds.length} hostile kinds at once, then, while the slow ones are at work, ${settings.fuzzPerRound} fuzzed bodies and a flood of ${settings.idlePerRound} idle kept-alive connections held to the end of the round (fuzz seed ${settings.seed}); production connection limits (headers ${result.limits.headersTimeoutMs / 1000} s, request ${result.limits.requestTimeoutMs / 1000} s, handshake ${result.limits.handshakeTimeoutMs / 1000} s, keep-alive ${result.limits.keepAliveTimeoutMs / 1000} s, cap ${result.limits.maxConnections}). Normal load throughout: ${settings.loadWorkers} keep-alive callers, each a review then a ${settings.loadPauseMs} ms pause; a ${WARM_UP_MS / 1000} s warm-up (not counted; memory at the start is taken at its end), ${settings.quietSeconds} s before the attack and ${settings.quietSeconds} s after it.`,
    '',
    '| figure | value |',
    '|---|---:|',
    `| hostile connections opened | ${hostileConnections} |`,
    `| ... cut off as expected (4xx with a reason or a close, in time) | ${kinds.reduce((sum, k) => sum + k.asExpected, 0)} of ${kinds.reduce((sum, k) => sum + k.connections, 0)} |`,
    `| idle connections refused at the cap / closed early (before the keep-alive timeout) | ${rounds.reduce((sum, r) => sum + r.idleRefused, 0)} / ${rounds.reduce((sum, r) => sum + r.idleCutEarly, 0)} |`,
    `| fuzzed bodies sent / contract problems / no answer (connection dropped at the cap) | ${fuzzSent} / ${fuzzProblems.length} / ${fuzzTransportErrors.length} |`,
    ...phases.map((p) => `| normal requests ${p.name} the attack: served / failed | ${p.served} / ${p.failed} |`),
    ...phases.map((p) => `| normal latency ${p.name} the attack: p50 / p99 / max ms | ${ms(percentile(p.latenciesMs, 50))} / ${ms(percentile(p.latenciesMs, 99))} / ${ms(Math.max(...p.latenciesMs))} |`),
    `| server RSS after GC: start / end (growth) MB | ${mb(result.start.rssBytes)} / ${mb(result.end.rssBytes)} (${mb(result.end.rssBytes - result.start.rssBytes)}) |`,
    `| server heap used after GC: start / end (growth) MB | ${mb(result.start.heapUsedBytes)} / ${mb(result.end.heapUsedBytes)} (${mb(result.end.heapUsedBytes - result.start.heapUsedBytes)}) |`,
    `| server external memory (buffers, TLS) after GC: start / end MB | ${mb(result.start.externalBytes)} / ${mb(result.end.externalBytes)} |`,
    `| server peak RSS during the run MB | ${result.peakRssMb.toFixed(1)} |`,
    `| server open sockets at the end | ${result.openAtEnd} |`,
    '',
    `Server after each round, once the hostile sockets are closed (after GC; the normal load still running): ${rounds.map((r, i) => `round ${i + 1}: RSS ${mb(r.after?.rssBytes ?? Number.NaN)} MB, heap ${mb(r.after?.heapUsedBytes ?? Number.NaN)} MB, ${r.after?.openConnections} open connections`).join('; ')}.`,
    '',
    '| hostile kind | connections | as expected | expected | median ms to cut off | max ms |',
    '|---|---:|---:|---|---:|---:|',
    ...kinds.map((k) => `| ${k.name} | ${k.connections} | ${k.asExpected} | ${k.expected} | ${ms(median(k.closedAfterMs))} | ${ms(Math.max(...k.closedAfterMs))} |`),
  ];
  const problems = [...kinds.flatMap((k) => k.problems.map((p) => `${k.name}: ${p}`)), ...fuzzProblems.slice(0, 5), ...fuzzTransportErrors.slice(0, 3).map((e) => `fuzz, no answer: ${e}`), ...phases.flatMap((p) => p.failures.map((f) => `normal ${p.name}: ${f}`))];
  if (problems.length > 0) lines.push('', 'Problems (first few):', '', ...problems.map((p) => `- ${p}`));
  return lines.join('\n');
}

async function main(): Promise<void> {
  const started = new Date();
  const log = (line: string): void => console.error(`[hostile] ${line}`);
  const result = await runHostileBench(log);
  console.log(`## Hostile clients (${started.toISOString()}, Node ${process.version})\n\n${hostileReport(result)}`);
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/hostile-${started.toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, JSON.stringify(result, null, 2));
  log(`raw results: ${file}`);
}

main().catch((error: unknown) => {
  console.error(`[hostile] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
