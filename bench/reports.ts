/**
 * The background audit at cluster scale: the compiled server against the API double the local
 * cluster runs on, the shipped policy plus 25 cel rules, N Pods (10,000 by default) across 100
 * namespaces stored before the server starts. One replica with reporting off, then one with it
 * on (`--reports objects`), each under the same paced admission load, measure: the leader's peak
 * memory (VmHWM) and what reporting adds to it, the time to the first complete report set, the
 * time from a violating Pod's creation to its result in a report, report writes in a steady
 * window (nothing changes) and in one where every Pod's status changes (no result does), the
 * bytes of report objects stored per 1,000 Pods and the largest, and admission latency (p50,
 * p99) with reporting off, during the first scan and after it.
 *
 * BENCH_REPORTS_PODS (10000), BENCH_REPORTS_NAMESPACES (100), BENCH_REPORTS_RATE (admission
 * reviews a second, 20), BENCH_REPORTS_WINDOW_S (steady windows, 60), BENCH_REPORTS_VIOLATIONS (10),
 * BENCH_REPORTS_NODE_OPTIONS (the servers', default the image's --max-semi-space-size=4 and the heap limit
 * Node derives from the chart's 384Mi memory limit, --max-old-space-size=256),
 * BENCH_REPORTS_MAX_BYTES (the server's --reports-max-bytes, default its own), BENCH_REPORTS_SERVER_LOG
 * (a file for the reporting server's stdout: its log, and V8's lines with --trace-gc).
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import { unhookedNode } from '../local-cluster/util/unhooked-node.js';
import { podCreateReview } from './pod-review.js';
import { ClusterHarness, type Replica } from '../test/support/kube/cluster-harness.js';
import { CLUSTER_REPORTS, installReportCrds, REPORTS, reportsHold, resultFor } from '../test/support/kube/reports-e2e.js';
import { CleanupList } from './lifecycle.js';
import { CEL_RULE_COUNT, reportsPods, reportsPolicy, violatingPod } from './reports-workload.js';
import { median } from './stats.js';

// A first report set at 50,000 Pods against the double (its paged lists filter the whole store per page) takes many minutes.
const STARTUP_MS = 3_600_000;

/**
 * The servers' Node as in the chart's container: the image's NODE_OPTIONS, and the heap limit
 * Node derives from the container's 384Mi memory limit (half of it, but at least V8's floor of
 * 256 MB: a heap_size_limit of 268 MB in it). Without a limit, as on a bench machine, V8 sizes the
 * heap from the machine's memory and lets garbage grow to up to four times the live heap before
 * a full collection.
 */
export const CONTAINER_NODE_OPTIONS = '--max-semi-space-size=4 --max-old-space-size=256';

export interface LatencySummary {
  reviews: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface ReportsBenchResult {
  pods: number;
  namespaces: number;
  celRules: number;
  rate: number;
  windowS: number;
  peakRssMb: { off: number; on: number; added: number };
  /** The reporting server's resident memory, sampled every 250 ms: its peak while the first scan ran, while the first report set was written, and after. */
  rssByPhaseMb: { scan: number; writing: number; after: number };
  /** V8's heap in use as the server's /metrics says: off after its load, on after the first report set and at the end. */
  heapUsedMb: { off: number; onFirstSet: number; onEnd: number };
  /** The server's own event-loop delay over each admission window (what any request could have waited for the loop). */
  eventLoop: { off: LoopDelay; onDuringScan: LoopDelay; onSteady: LoopDelay };
  firstReportSet: { fromSpawnMs: number; fromTermMs: number; reports: number; writes: number };
  violationToReportMs: number[];
  steadyWrites: { quiet: number; statusChurn: number; statusUpdates: number };
  stored: { reports: number; bytes: number; bytesPer1000Pods: number; largestBytes: number };
  admission: { off: LatencySummary; onDuringScan: LatencySummary; onSteady: LatencySummary };
  loadAverage: number[];
}

function statusMb(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

const vmHwmMb = (pid: number | undefined): number => statusMb(pid, 'VmHWM');

/** The peak resident memory of `pid` in each phase, sampled until stop(); `phase` moves it on. */
function rssSampler(pid: number | undefined): { phase(name: keyof ReportsBenchResult['rssByPhaseMb']): void; stop(): ReportsBenchResult['rssByPhaseMb'] } {
  const peaks = { scan: 0, writing: 0, after: 0 };
  let phase: keyof typeof peaks = 'scan';
  const sample = (): void => {
    let rss = 0;
    try {
      rss = statusMb(pid, 'VmRSS');
    } catch {
      // Gone (the run failed and stopped it): nothing more to sample.
    }
    if (rss > peaks[phase]) peaks[phase] = rss;
  };
  const timer = setInterval(sample, 250).unref();
  return {
    phase: (name) => {
      sample();
      phase = name;
    },
    stop: () => {
      clearInterval(timer);
      return peaks;
    },
  };
}

/**
 * Paced admission reviews to the validating webhook of the Pod rules (open loop, each latency from
 * the moment it was due) until `until` settles, sent from a child process of their own
 * (review-load-process.ts): the API double in this process never delays them.
 */
async function admissionLoad(cluster: ClusterHarness, replica: Replica, rate: number, until: Promise<unknown>): Promise<LatencySummary> {
  const path = cluster.registeredValidatingPaths().find((p) => p.includes('no-latest')) ?? cluster.registeredValidatingPaths()[0] ?? '/';
  const node = unhookedNode([join(repositoryRoot(), 'dist', 'bench', 'review-load-process.js'), String(replica.port), `${path}?timeout=10s`, String(rate)]);
  const child = spawn(node.command, node.args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const output: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
  child.stdin.end(JSON.stringify(podCreateReview()));
  await until.catch(() => undefined);
  child.kill('SIGTERM');
  await once(child, 'exit');
  return JSON.parse(Buffer.concat(output).toString('utf8')) as LatencySummary;
}

/** The server's own /metrics (prom-client's default Node metrics): one scrape, by series name. */
async function scrape(replica: Replica): Promise<(name: string) => number> {
  const text = await (await fetch(`http://127.0.0.1:${replica.healthPort}/metrics`, { signal: AbortSignal.timeout(30_000) })).text();
  return (name) => Number(text.split('\n').find((l) => l.startsWith(`${name} `))?.split(' ')[1] ?? Number.NaN);
}

/** The server's event-loop delay since the previous scrape (prom-client resets it at each), in ms. */
export interface LoopDelay {
  p99Ms: number;
  maxMs: number;
}

const loopDelay = (metric: (name: string) => number): LoopDelay => ({ p99Ms: metric('nodejs_eventloop_lag_p99_seconds') * 1000, maxMs: metric('nodejs_eventloop_lag_max_seconds') * 1000 });
const heapMb = (metric: (name: string) => number): number => metric('nodejs_heap_size_used_bytes') / 1024 / 1024;

const settleAfter = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function writeRequests(cluster: ClusterHarness): number {
  return cluster.api.requests.filter((r) => ['reports', 'clusterreports'].includes(r.resource ?? '') && ['create', 'update', 'patch', 'delete'].includes(r.verb ?? '')).length;
}

export async function runReportsBench(log: (line: string) => void): Promise<ReportsBenchResult> {
  const pods = Number(process.env.BENCH_REPORTS_PODS ?? 10_000);
  const namespaces = Number(process.env.BENCH_REPORTS_NAMESPACES ?? 100);
  const rate = Number(process.env.BENCH_REPORTS_RATE ?? 20);
  const windowS = Number(process.env.BENCH_REPORTS_WINDOW_S ?? 60);
  const violations = Number(process.env.BENCH_REPORTS_VIOLATIONS ?? 10);
  const cleanups = new CleanupList();
  try {
    // One kube-apiserver: three would keep three watch caches of every Pod in this process.
    const cluster = await ClusterHarness.start(cleanups, { apiservers: 1 });
    cluster.seedDeployment(['kas-off', 'kas-on']);
    await installReportCrds(cluster.api);
    log(`reports: storing ${pods} Pods across ${namespaces} namespaces`);
    for (let i = 0; i < namespaces; i++) cluster.api.store.createNamespace(`ns-${i}`);
    const workload = reportsPods(pods, namespaces);
    for (const pod of workload) cluster.api.store.put('pods', pod);
    const policyFile = join(cluster.dir, 'policy.yaml');
    await writeFile(policyFile, await reportsPolicy());
    const args = ['--policy-file', policyFile, '--log-level', 'info'];
    // As the image runs in the chart's container (no memory limit here: the flag stands in for it).
    const env: Record<string, string> = { NODE_OPTIONS: process.env.BENCH_REPORTS_NODE_OPTIONS ?? CONTAINER_NODE_OPTIONS };
    if (process.env.BENCH_REPORTS_MAX_BYTES) env['REPORTS_MAX_BYTES'] = process.env.BENCH_REPORTS_MAX_BYTES;

    log('reports: off (the baseline), under the admission load');
    const off = await cluster.startReplica(cleanups, 'kas-off', [...args, '--reports', 'off'], env, STARTUP_MS);
    await scrape(off);
    const offLoad = await admissionLoad(cluster, off, rate, settleAfter(windowS * 1000));
    const offRss = vmHwmMb(off.child.process.pid);
    const offMetrics = await scrape(off);
    await off.child.stop('SIGTERM');

    log('reports: on; the first scan under the admission load');
    const spawnedAt = performance.now();
    const on: Replica = await cluster.startReplica(cleanups, 'kas-on', [...args, '--reports', 'objects'], env, STARTUP_MS);
    const sampler = rssSampler(on.child.process.pid);
    const firstSet = on.child.waitForMessage('background audit: first complete report set written', STARTUP_MS);
    void on.child.waitForMessage('background audit: first scan complete', STARTUP_MS).then(() => sampler.phase('writing'), () => undefined);
    await scrape(on);
    const duringScan = await admissionLoad(cluster, on, rate, firstSet);
    const first = await firstSet;
    sampler.phase('after');
    const fromSpawnMs = performance.now() - spawnedAt;
    const firstSetMetrics = await scrape(on);
    log(`reports: first complete report set after ${Math.round(fromSpawnMs)} ms; steady load`);
    const steady = await admissionLoad(cluster, on, rate, settleAfter(windowS * 1000));
    const steadyMetrics = await scrape(on);

    log(`reports: ${violations} violating Pods, one after another`);
    const violationToReportMs: number[] = [];
    for (let i = 0; i < violations; i++) {
      const namespace = `ns-${i % namespaces}`;
      const createdAt = performance.now();
      cluster.api.store.put('pods', violatingPod(`bad-${i}`, namespace));
      await reportsHold(cluster.api, `bad-${i} in its report`, () => resultFor(cluster.api, namespace, 'Pod', `bad-${i}`, 'deny-privileged')?.result === 'warn', 120_000);
      violationToReportMs.push(performance.now() - createdAt);
    }
    await settleAfter(5000);

    log(`reports: ${windowS} s with nothing changing`);
    const quietFrom = writeRequests(cluster);
    await settleAfter(windowS * 1000);
    const quiet = writeRequests(cluster) - quietFrom;

    log(`reports: ${windowS} s with every Pod's status changing in turn (no result changes)`);
    const churnFrom = writeRequests(cluster);
    let statusUpdates = 0;
    const churnEnd = performance.now() + windowS * 1000;
    for (let i = 0; performance.now() < churnEnd; i++) {
      const pod = workload[i % workload.length]!;
      const stored = cluster.api.store.get('pods', pod.metadata?.namespace, pod.metadata?.name ?? '');
      if (stored) cluster.api.store.put('pods', { ...stored, status: { phase: 'Running', startTime: new Date().toISOString() } });
      statusUpdates++;
      await settleAfter(1000 / rate);
    }
    await settleAfter(5000);
    const statusChurn = writeRequests(cluster) - churnFrom;

    const onRss = vmHwmMb(on.child.process.pid);
    const rssByPhaseMb = sampler.stop();
    const endHeap = heapMb(await scrape(on));
    const stored = [...cluster.api.store.list(REPORTS), ...cluster.api.store.list(CLUSTER_REPORTS)].map((report) => Buffer.byteLength(JSON.stringify(report)));
    const bytes = stored.reduce((sum, n) => sum + n, 0);
    await on.child.stop('SIGTERM');
    if (process.env.BENCH_REPORTS_SERVER_LOG) await writeFile(process.env.BENCH_REPORTS_SERVER_LOG, on.child.stdout);
    return {
      pods,
      namespaces,
      celRules: CEL_RULE_COUNT,
      rate,
      windowS,
      peakRssMb: { off: offRss, on: onRss, added: onRss - offRss },
      rssByPhaseMb,
      heapUsedMb: { off: heapMb(offMetrics), onFirstSet: heapMb(firstSetMetrics), onEnd: endHeap },
      eventLoop: { off: loopDelay(offMetrics), onDuringScan: loopDelay(firstSetMetrics), onSteady: loopDelay(steadyMetrics) },
      firstReportSet: { fromSpawnMs, fromTermMs: Number(first['ms']), reports: Number(first['reports']), writes: Number(first['writes']) },
      violationToReportMs,
      steadyWrites: { quiet, statusChurn, statusUpdates },
      stored: { reports: stored.length, bytes, bytesPer1000Pods: (bytes / pods) * 1000, largestBytes: Math.max(...stored) },
      admission: { off: offLoad, onDuringScan: duringScan, onSteady: steady },
      loadAverage: loadavg(),
    };
  } finally {
    await cleanups.run();
  }
}

const kb = (bytes: number): string => `${Math.round(bytes / 1024)} KiB`;
const ms = (value: number): string => `${Math.round(value)}`;

export function reportsBenchReport(r: ReportsBenchResult): string {
  const row = (name: string, l: LatencySummary, loop: LoopDelay): string => `| ${name} | ${l.reviews} | ${l.failed} | ${ms(l.p50Ms)} | ${ms(l.p99Ms)} | ${ms(l.maxMs)} | ${ms(loop.p99Ms)} / ${ms(loop.maxMs)} |`;
  return [
    `${r.pods} Pods across ${r.namespaces} namespaces; the shipped policy plus ${r.celRules} cel rules; admission load ${r.rate} reviews a second; windows of ${r.windowS} s; load average at the end ${r.loadAverage.map((l) => l.toFixed(1)).join(' ')}.`,
    '',
    '| measurement | figure | goal |',
    '|---|---:|---|',
    `| leader peak memory (VmHWM), reporting off / on | ${Math.round(r.peakRssMb.off)} / ${Math.round(r.peakRssMb.on)} MiB | |`,
    `| peak memory added by reporting | ${Math.round(r.peakRssMb.added)} MiB | <= 100 MB at 50,000 Pods |`,
    `| reporting server's peak RSS (sampled): first scan / writing the first report set / after | ${Math.round(r.rssByPhaseMb.scan)} / ${Math.round(r.rssByPhaseMb.writing)} / ${Math.round(r.rssByPhaseMb.after)} MiB | |`,
    `| V8 heap in use: off / on after the first report set / on at the end | ${Math.round(r.heapUsedMb.off)} / ${Math.round(r.heapUsedMb.onFirstSet)} / ${Math.round(r.heapUsedMb.onEnd)} MiB | |`,
    `| first complete report set after the start (spawn / leader's term) | ${ms(r.firstReportSet.fromSpawnMs)} / ${ms(r.firstReportSet.fromTermMs)} ms (${r.firstReportSet.reports} reports, ${r.firstReportSet.writes} writes) | |`,
    `| violating Pod created -> its result in a report, median / max of ${r.violationToReportMs.length} | ${ms(median(r.violationToReportMs))} / ${ms(Math.max(...r.violationToReportMs))} ms | <= 10 s |`,
    `| report writes in ${r.windowS} s, nothing changing | ${r.steadyWrites.quiet} | none |`,
    `| report writes in ${r.windowS} s, ${r.steadyWrites.statusUpdates} Pod status updates | ${r.steadyWrites.statusChurn} | none |`,
    `| report objects stored / bytes / per 1,000 Pods | ${r.stored.reports} / ${kb(r.stored.bytes)} / ${kb(r.stored.bytesPer1000Pods)} | |`,
    `| largest report object | ${kb(r.stored.largestBytes)} | under the 256 KiB limit |`,
    '',
    '| admission (reviews to the Pod rules\' webhook, from a process of their own) | reviews | failed | p50 ms | p99 ms | max ms | server event-loop delay p99 / max ms |',
    '|---|---:|---:|---:|---:|---:|---:|',
    row('reporting off', r.admission.off, r.eventLoop.off),
    row('reporting on, during the first scan', r.admission.onDuringScan, r.eventLoop.onDuringScan),
    row('reporting on, after it', r.admission.onSteady, r.eventLoop.onSteady),
  ].join('\n');
}
