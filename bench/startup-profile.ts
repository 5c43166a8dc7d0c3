/**
 * Where a start's CPU goes: `node dist/bench/startup-profile.js [ENTRY] [RUNS]`
 * starts the server (ENTRY: dist/src/main.js by default, or dist/bundle/main.js) against the
 * Kubernetes API test double with the CA already in the Secret, under `--cpu-prof`, RUNS times
 * (default 3), and prints the profiles' self time summed by where the code comes from: each
 * dependency package, each src/ folder, Node's own modules, V8's compiler and garbage collector.
 * NODE_COMPILE_CACHE, when set, reaches the server (fill it first, as the Dockerfile does:
 * `NODE_COMPILE_CACHE=DIR node dist/bundle/main.js --help`).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CleanupList } from './lifecycle.js';
import { median } from './stats.js';
import { ClusterHarness } from '../test/support/kube/cluster-harness.js';
import { MAIN_JS } from '../test/support/server/child-server.js';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string }; hitCount?: number }
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

/** Where a frame's code comes from: a package, a src/ folder, Node itself, or one of V8's own entries. */
export function origin(frame: { functionName: string; url: string }): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:internal/modules/')) return 'node: module loader (resolve, read, link)';
  if (url.startsWith('node:')) return 'node: other built-in modules';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/dist\/(src\/[^/]+|bundle)\//.exec(url);
  return own ? own[1]! : url;
}

/**
 * Milliseconds of self time per origin in one profile (each sample is worth the time to the next),
 * up to `untilMs` after the profile began (the process's `ready`), idle waits left out.
 */
export function selfTimeByOrigin(profile: CpuProfile, untilMs: number): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let atMs = 0;
  for (let i = 0; i < profile.samples.length && atMs <= untilMs; i++) {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    atMs += (profile.timeDeltas[i] ?? 0) / 1000;
    const key = origin(byId.get(profile.samples[i]!)!.callFrame);
    if (key !== '(idle)') totals.set(key, (totals.get(key) ?? 0) + ms);
  }
  return totals;
}

async function main(): Promise<void> {
  const entry = resolve(process.argv[2] ?? MAIN_JS);
  const runs = Number(process.argv[3] ?? 3);
  const dir = await mkdtemp(join(tmpdir(), 'kas-startup-profile-'));
  const cleanups = new CleanupList();
  try {
    const cluster = await ClusterHarness.start(cleanups);
    cluster.seedDeployment(['kas-bench']);
    /** Starts one replica and returns when, in ms after its spawn, it logged `ready`. */
    const start = async (env: Record<string, string>): Promise<number> => {
      const spawnedAt = Date.now();
      const replica = await ClusterHarness.ready(cluster.spawnReplica(cleanups, 'kas-bench', [], env, entry));
      await replica.child.stop('SIGTERM');
      return Date.parse(replica.child.logs.find((l) => l.msg === 'ready')!.time) - spawnedAt;
    };
    await start({}); // the first start generates the CA into the Secret
    const tables: Map<string, number>[] = [];
    for (let run = 0; run < runs; run++) {
      const runDir = join(dir, String(run));
      // NODE_COMPILE_CACHE passes through: the image's way is the bundle with its cache filled beforehand.
      const cache = process.env['NODE_COMPILE_CACHE'];
      const readyMs = await start({ NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${runDir} --cpu-prof-interval=200`, ...(cache ? { NODE_COMPILE_CACHE: cache } : {}) });
      for (const file of await readdir(runDir)) tables.push(selfTimeByOrigin(JSON.parse(await readFile(join(runDir, file), 'utf8')) as CpuProfile, readyMs));
    }
    const keys = [...new Set(tables.flatMap((t) => [...t.keys()]))];
    const rows = keys.map((key) => ({ key, ms: median(tables.map((t) => t.get(key) ?? 0)) })).sort((a, b) => b.ms - a.ms);
    const total = median(tables.map((t) => [...t.values()].reduce((a, b) => a + b, 0)));
    process.stdout.write(`${entry}, Node ${process.version}, ${tables.length} profiles (spawn -> ready), median self time ms, idle left out\n`);
    process.stdout.write(`| origin | ms | share |\n|---|---:|---:|\n`);
    for (const row of rows.filter((r) => r.ms >= 2)) process.stdout.write(`| ${row.key} | ${row.ms.toFixed(0)} | ${((100 * row.ms) / total).toFixed(0)}% |\n`);
    process.stdout.write(`| total on the CPU | ${total.toFixed(0)} | |\n`);
  } finally {
    await cleanups.run();
    if (process.env.KEEP_PROFILES) process.stderr.write(`profiles kept in ${dir}\n`);
    else await rm(dir, { recursive: true, force: true });
  }
}

await main();
