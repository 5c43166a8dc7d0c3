/** The admission bench's Markdown report: every server against the reference, the targets judged on the shipped binary, two builds side by side, where the CPU goes. */
import type { AdmissionBenchResult, RoundComparison, ScenarioComparison, ScenarioProfile, ScenarioResult } from './admission.js';
import { CONNECTIONS, DURATION_SECONDS, PACED_MAX_CONNECTIONS, PACED_RATE, PACED_SECONDS, TARGETS, WARMUP_SECONDS } from './admission.js';
import type { ServerKey } from './admission-servers.js';
import { topDifferences, total } from './review-profile.js';
import { SERVER_NODE_FLAGS } from './target-process.js';

function verdict(ok: boolean): string {
  return ok ? 'met' : 'MISSED';
}

const fixed = (values: readonly number[], digits = 2): string => values.map((v) => v.toFixed(digits)).join(', ');

function signed(value: number, digits = 2): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
}

function scenarioTable(result: AdmissionBenchResult): string[] {
  const reference = result.scenarios[0] as ScenarioResult;
  return [
    `| scenario | req/s (-c${CONNECTIONS}) | ratio to reference | p50 ms | p99 ms | p99 ratio | paced p50 ms | paced p99 ms | paced max ms | peak RSS MB | server CPU µs/review | CPU over the reference's | main thread µs/review | server waiting for a CPU µs/review | errors (wrk / paced) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...result.scenarios.map(
      (s) =>
        `| ${s.label} | ${s.requestsPerSecond.toFixed(0)} | ${(s.requestsPerSecond / reference.requestsPerSecond).toFixed(2)} | ${s.p50Ms.toFixed(2)} | ${s.p99Ms.toFixed(2)} | ${(s.p99Ms / reference.p99Ms).toFixed(2)} | ${s.paced.p50Ms.toFixed(2)} | ${s.paced.p99Ms.toFixed(2)} | ${s.paced.maxMs.toFixed(1)} | ${s.peakRssMb.toFixed(1)} | ${s.cpuUsPerRequest.toFixed(1)} | ${(s.cpuUsPerRequest / reference.cpuUsPerRequest).toFixed(2)} | ${s.mainThreadUsPerRequest.toFixed(1)} | ${s.cpuWaitUsPerRequest.toFixed(0)} | ${s.errors} / ${s.paced.errors} |`,
    ),
  ];
}

function perRoundLine(c: ScenarioComparison): string {
  const of = (pick: (r: RoundComparison) => number): string => fixed(c.perRound.map(pick));
  return `- ${c.label}: throughput ratio ${c.median.throughputRatio.toFixed(2)} (${of((r) => r.throughputRatio)}); CPU per review over the reference's ${c.median.cpuRatio.toFixed(2)} (${of((r) => r.cpuRatio)}); p99 ratio ${of((r) => r.p99Ratio)}; paced p99 minus the reference's, ms: ${of((r) => r.pacedP99ExtraMs)}`;
}

/** The admission targets (each relative to the reference in the same run), on the shipped binary of this checkout (or the first server measured without it). */
function verdicts(result: AdmissionBenchResult): string[] {
  const judged: ServerKey = result.comparisons.some((c) => c.server === 'binary') ? 'binary' : (result.comparisons[0]?.server ?? 'binary');
  const validate = result.comparisons.find((c) => c.server === judged && c.route === 'validate');
  const mutate = result.comparisons.find((c) => c.server === judged && c.route === 'mutate');
  if (!validate || !mutate) return [];
  const reference = result.scenarios[0] as ScenarioResult;
  const rss = Math.max(...result.scenarios.filter((s) => s.server === judged).map((s) => s.peakRssMb));
  const v = validate.median;
  const m = mutate.median;
  return [
    `The admission targets, judged on ${judged === 'binary' ? 'the shipped binary' : `the ${judged} server`}:`,
    '',
    `- validate throughput ${v.throughputRatio.toFixed(2)}x the reference (target >= ${TARGETS.validateRatio}): ${verdict(v.throughputRatio >= TARGETS.validateRatio)}`,
    `- mutate throughput ${m.throughputRatio.toFixed(2)}x the reference (target >= ${TARGETS.mutateRatio}): ${verdict(m.throughputRatio >= TARGETS.mutateRatio)}`,
    `- p99 at ${CONNECTIONS} connections: validate ${v.p99Ratio.toFixed(2)}x, mutate ${m.p99Ratio.toFixed(2)}x the reference's (target <= ${TARGETS.p99Ratio}x): ${verdict(Math.max(v.p99Ratio, m.p99Ratio) <= TARGETS.p99Ratio)}`,
    `- p99 at ${PACED_RATE}/s paced: validate ${signed(v.pacedP99ExtraMs)} ms, mutate ${signed(m.pacedP99ExtraMs)} ms against the reference's (target <= +${TARGETS.pacedP99ExtraMs} ms): ${verdict(Math.max(v.pacedP99ExtraMs, m.pacedP99ExtraMs) <= TARGETS.pacedP99ExtraMs)}`,
    `- peak RSS under load: ${rss.toFixed(1)} MB, reference ${reference.peakRssMb.toFixed(1)} MB (target <= reference + ${TARGETS.rssExtraMb} MB): ${verdict(rss <= reference.peakRssMb + TARGETS.rssExtraMb)}`,
  ];
}

function buildLines(result: AdmissionBenchResult): string[] {
  if (result.builds.length === 0) return [];
  const lines = [
    'This build against the baseline (BENCH_BASELINE), round by round (a ratio above 1 is this build faster; a CPU ratio below 1 is this build cheaper):',
    '',
    '| route | throughput, this build over the baseline: median (rounds) | CPU µs per review, this build over the baseline | p99, this build over the baseline |',
    '|---|---|---|---|',
  ];
  for (const b of result.builds) {
    lines.push(
      `| ${b.route} | **${b.median.throughputRatio.toFixed(3)}** (${fixed(b.perRound.map((r) => r.throughputRatio), 3)}) | ${b.median.cpuRatio.toFixed(3)} (${fixed(b.perRound.map((r) => r.cpuRatio), 3)}) | ${b.median.p99Ratio.toFixed(2)} (${fixed(b.perRound.map((r) => r.p99Ratio))}) |`,
    );
  }
  return lines;
}

const asMap = (record: Record<string, number>): Map<string, number> => new Map(Object.entries(record));

/** The pairs whose differences the profile section lists: what the first server is compared with. */
const PROFILE_PAIRS: readonly [ServerKey, ServerKey][] = [
  ['in-process', 'binary'],
  ['binary', 'init'],
  ['baseline', 'binary'],
];

function profileLines(profiles: readonly ScenarioProfile[] | undefined): string[] {
  if (!profiles || profiles.length === 0) return [];
  const lines = [
    "Where the CPU goes (BENCH_CPU_PROF: every server under --cpu-prof; its main thread's self time in the closed-loop windows per review answered there, idle left out, scaled to the main thread's run time so that waits for a CPU drop out; the profiler costs each about the same):",
  ];
  for (const route of ['validate', 'mutate'] as const) {
    const ofRoute = profiles.filter((p) => p.route === route || p.route === 'reference');
    const origins = new Set(ofRoute.flatMap((p) => Object.keys(p.byOrigin)));
    const rows = [...origins].map((origin) => ({ origin, values: ofRoute.map((p) => p.byOrigin[origin] ?? 0) })).filter((r) => Math.max(...r.values) >= 0.2);
    rows.sort((a, b) => Math.max(...b.values) - Math.max(...a.values));
    lines.push('', `${route}, µs per review by where the code comes from:`, '', `| origin | ${ofRoute.map((p) => p.server).join(' | ')} |`, `|---|${ofRoute.map(() => '---:').join('|')}|`);
    for (const row of rows) lines.push(`| ${row.origin} | ${row.values.map((v) => v.toFixed(1)).join(' | ')} |`);
    lines.push(`| **total on the main thread** | ${ofRoute.map((p) => `**${total(asMap(p.byOrigin)).toFixed(1)}**`).join(' | ')} |`);
    for (const [from, to] of PROFILE_PAIRS) {
      const a = ofRoute.find((p) => p.server === from);
      const b = ofRoute.find((p) => p.server === to);
      if (!a || !b) continue;
      const diff = total(asMap(b.byFunction)) - total(asMap(a.byFunction));
      lines.push('', `${route}: ${to} against ${from}, ${signed(diff, 1)} µs per review; the functions that differ most (self µs per review):`, '', `| function | ${from} | ${to} | difference |`, '|---|---:|---:|---:|');
      for (const d of topDifferences(asMap(a.byFunction), asMap(b.byFunction), 12)) lines.push(`| \`${d.key}\` | ${d.a.toFixed(2)} | ${d.b.toFixed(2)} | ${signed(d.b - d.a)} |`);
    }
  }
  return lines;
}

/** Markdown report of one run, with each target marked met or missed. */
export function admissionReport(result: AdmissionBenchResult): string {
  const paths = result.servers.filter((s) => s.paths).map((s) => `${s.key} \`${s.paths?.validate}\` and \`${s.paths?.mutate}\``);
  const lines = [
    `Review body: ${result.body.bytes} bytes. Per round and scenario: wrk -t1 -c${CONNECTIONS} -d${DURATION_SECONDS}s --latency (closed loop), then ${PACED_RATE} reviews/s paced for ${PACED_SECONDS} s (open loop, latency from the moment each was due, up to ${PACED_MAX_CONNECTIONS} keep-alive connections, 1 s uncounted first); ${result.rounds} interleaved rounds (a ${WARMUP_SECONDS} s wrk warm-up first; odd rounds in reverse order), HTTP/1.1 keep-alive over TLS. The binaries run as the image runs them (NODE_ENV=production, NODE_OPTIONS=${SERVER_NODE_FLAGS.join(' ')}, --log-level info, stdout read by the bench), local mode, grouping: ${result.grouping}; the forked servers with \`node ${SERVER_NODE_FLAGS.join(' ')}\`, the in-process target's log to /dev/null. Paths: ${paths.join('; ')}. Figures are medians over the rounds; RSS is the peak; CPU is the process's, all threads.`,
    '',
    ...scenarioTable(result),
    '',
    'Per round, each against the reference of the same round:',
    '',
    ...result.comparisons.map(perRoundLine),
  ];
  for (const part of [verdicts(result), buildLines(result), profileLines(result.profiles)]) if (part.length > 0) lines.push('', ...part);
  return lines.join('\n');
}
