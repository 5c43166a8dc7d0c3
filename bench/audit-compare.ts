/**
 * `audit` of two builds in one run: `node dist/bench/audit-compare.js ROOT_A
 * ROOT_B [ROUNDS] [SIZES]` runs each checkout's compiled binary (ROOT/dist/src/main.js audit -o
 * json, as bench/tools.ts runs it) against one API test double holding the same Pods
 * (bench/tools-workload.ts: a 25-rule policy; SIZES default 5000, e.g. `1000,10000` to see memory
 * stay flat), the builds alternating round by round so that they share the machine's noise. The
 * first round of each build is a warm-up (the page cache, V8's compile cache when the build uses
 * one). Figures: rule evaluations per CPU second of the audit process (its whole run: start,
 * discovery, listing, parsing, evaluating, the report), its peak RSS, and the 1-minute load average
 * at each round; with two sizes or more, the warm rate between them (printWarmRates).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { median } from './stats.js';
import { toolsPods, toolsPolicy } from './tools-workload.js';

const RULES = 25;
const HERE = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  perCpuSecond: number;
  cpuMs: number;
  maxRssMb: number;
  wallMs: number;
}

function auditOnce(root: string, kubeconfig: string, policy: string, objects: number): Promise<Run> {
  const started = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', join(HERE, 'dist', 'bench', 'report-usage.js'), join(resolve(root), 'dist', 'src', 'main.js'), 'audit', '--kubeconfig', kubeconfig, '--policy-file', policy, '-o', 'json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '' },
      timeout: 600_000,
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      const line = stderr.split('\n').find((l) => l.includes('benchUsage'));
      if ((code !== 0 && code !== 1) || !line) return fail(new Error(`${root}: audit exited ${code}: ${stderr.slice(-500)}`));
      const report = JSON.parse(Buffer.concat(stdout).toString()) as { namespaces: { objects: number }[] };
      const audited = report.namespaces.reduce((n, ns) => n + ns.objects, 0);
      if (audited !== objects) return fail(new Error(`${root}: audit saw ${audited} of ${objects} Pods`));
      const usage = (JSON.parse(line) as { benchUsage: { maxRssKb: number; cpuUs: number } }).benchUsage;
      // Every Pod reaches all 25 webhooks (none is excluded, every rule matches Pods).
      done({ perCpuSecond: Math.round((objects * RULES) / (usage.cpuUs / 1e6)), cpuMs: Math.round(usage.cpuUs / 1000), maxRssMb: Math.round(usage.maxRssKb / 1024), wallMs: Math.round(performance.now() - started) });
    });
  });
}

const k = (n: number): string => String(Math.round(n / 1000));

/** Median CPU ms of each build's runs at each size, for the warm rate between sizes. */
const cpuAt = new Map<string, Map<number, number>>();

async function compareAt(roots: string[], rounds: number, objects: number, dir: string, policy: string): Promise<void> {
  const api = await startFakeApiServer();
  try {
    for (let i = 0; i < 20; i++) api.store.createNamespace(`ns-${i}`);
    for (const pod of toolsPods(objects)) api.store.put('pods', pod);
    const kubeconfig = join(dir, `kubeconfig-${objects}`);
    await api.writeKubeconfig(kubeconfig);
    const runs = new Map<string, Run[]>(roots.map((r) => [r, []]));
    const loads: string[] = [];
    for (let round = 0; round <= rounds; round++) {
      loads.push(loadavg()[0]!.toFixed(1));
      for (const root of roots) {
        const run = await auditOnce(root, kubeconfig, policy, objects);
        if (round > 0) runs.get(root)!.push(run);
      }
    }
    console.log(`\n${objects.toLocaleString('en-US')} Pods x ${RULES} rules, ${rounds} rounds after a warm-up; load average at each round ${loads.join(', ')}`);
    console.log('| build | evaluations per CPU second, median (each round, thousands) | CPU ms, median | peak RSS MB, median (min-max) | wall ms, median |');
    console.log('|---|---:|---:|---:|---:|');
    for (const root of roots) {
      const r = runs.get(root)!;
      const rss = r.map((x) => x.maxRssMb);
      console.log(`| ${root} | ${Math.round(median(r.map((x) => x.perCpuSecond))).toLocaleString('en-US')} (${r.map((x) => k(x.perCpuSecond)).join(', ')}) | ${median(r.map((x) => x.cpuMs))} | ${median(rss)} (${Math.min(...rss)}-${Math.max(...rss)}) | ${median(r.map((x) => x.wallMs))} |`);
    }
    for (const root of roots) cpuAt.set(root, (cpuAt.get(root) ?? new Map<number, number>()).set(objects, median(runs.get(root)!.map((x) => x.cpuMs))));
    const [a, b] = roots.map((root) => runs.get(root)!.map((x) => x.perCpuSecond));
    if (a && b) console.log(`${roots[1]} / ${roots[0]}: ${(median(b) / median(a)).toFixed(2)}x of the medians; per round ${b.map((x, i) => (x / a[i]!).toFixed(2)).join(', ')}`);
  } finally {
    await api.close();
  }
}

const [rootA, rootB, roundsArg, sizesArg] = process.argv.slice(2);
if (!rootA) throw new Error('usage: node dist/bench/audit-compare.js ROOT_A [ROOT_B] [ROUNDS] [SIZES]');
const roots = rootB ? [rootA, rootB] : [rootA];
const rounds = Number(roundsArg ?? 5);
const sizes = (sizesArg ?? '5000').split(',').map(Number);
const dir = await mkdtemp(join(tmpdir(), 'kas-bench-audit-'));
try {
  const policy = join(dir, 'policy.yaml');
  await writeFile(policy, toolsPolicy());
  console.log(`audit-compare, Node ${process.version}, ${new Date().toISOString()}`);
  for (const objects of sizes) await compareAt(roots, rounds, objects, dir, policy);
  printWarmRates(roots, sizes);
} finally {
  await rm(dir, { recursive: true, force: true });
}

/**
 * The warm rate: what each further Pod costs a whole audit run (listing, parsing, evaluating,
 * reporting) once the run's fixed cost (Node, the modules, the policy, discovery) is paid, from
 * the difference of the median CPU between two sizes measured in this run.
 */
function printWarmRates(roots: string[], sizes: number[]): void {
  if (sizes.length < 2) return;
  console.log('\nWarm rate between sizes: rule evaluations per CPU second of the further Pods (the run\'s fixed cost set aside)');
  console.log(`| build | ${sizes.slice(1).map((to, i) => `${sizes[i]!.toLocaleString('en-US')} -> ${to.toLocaleString('en-US')} Pods`).join(' | ')} |`);
  console.log(`|---|${sizes.slice(1).map(() => '---:').join('|')}|`);
  for (const root of roots) {
    const cpu = cpuAt.get(root)!;
    const rates = sizes.slice(1).map((to, i) => {
      const from = sizes[i]!;
      const ms = cpu.get(to)! - cpu.get(from)!;
      return ms > 0 ? Math.round(((to - from) * RULES) / (ms / 1000)).toLocaleString('en-US') : 'n/a';
    });
    console.log(`| ${root} | ${rates.join(' | ')} |`);
  }
}
