/**
 * Where a server's CPU goes per review, from a `--cpu-prof` profile of the whole process: the
 * samples inside a measured window (a wrk run against one path) summed by what they ran, divided
 * by the reviews answered in that window. Profiles' timestamps are the monotonic clock in µs, the
 * one process.hrtime reads, so the bench's window applies to the server's profile as it is. A
 * sample's time is wall time on the main thread, so time spent waiting for a CPU on a busy
 * machine lands on whatever ran before the wait; `scaleToRunTime` takes it out in proportion.
 */

export interface ProfileFrame {
  functionName: string;
  url: string;
  /** 0-based, as V8 writes them. */
  lineNumber: number;
  columnNumber?: number;
}

export interface CpuProfile {
  nodes: { id: number; callFrame: ProfileFrame }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A measured window, in µs of the monotonic clock. */
export interface ProfileWindow {
  fromUs: number;
  toUs: number;
}

/** The bench's own clock in the profiles' unit. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** A path made comparable between checkouts, the bundle, and a project's installed copy of the package. */
export function shortUrl(url: string): string {
  const file = url.replace(/^file:\/\//, '');
  const installed = file.lastIndexOf('/node_modules/');
  if (installed >= 0) return file.slice(installed + '/node_modules/'.length).replace(/^kube-admission-server\//, '');
  const dist = file.lastIndexOf('/dist/');
  return dist >= 0 ? file.slice(dist + 1) : file;
}

/**
 * Where a frame's code comes from: a dependency package, a folder of the server's src/ (the same
 * key whether it runs from dist/src, the bundle's source or a project's node_modules), Node's
 * built-in modules, or one of V8's own entries ((garbage collector), (program)).
 */
export function frameOrigin(frame: ProfileFrame): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : 'native code (C++, builtins, RegExp)';
  if (frame.url.startsWith('node:')) return 'node: built-in modules';
  const file = shortUrl(frame.url);
  if (file.startsWith('dist/bundle/')) return 'the bundle (server and dependencies)';
  const own = /^dist\/src\/([^/]+)\//.exec(file);
  if (own) return `src/${own[1]}`;
  if (file.startsWith('dist/bench/')) return 'bench/ (the reference)';
  const pkg = /^((?:@[^/]+\/)?[^/]+)\//.exec(file);
  return pkg ? (pkg[1] as string) : file;
}

/**
 * A function by its name, so that the same function lines up between the bundle and the tsc
 * output (same-named functions of different files add up); an anonymous one by its place.
 */
export function frameFunction(frame: ProfileFrame): string {
  if (frame.functionName) return frame.functionName;
  if (!frame.url) return '(native)';
  return `(anonymous) ${shortUrl(frame.url)}:${frame.lineNumber + 1}:${(frame.columnNumber ?? 0) + 1}`;
}

/**
 * µs of self time per key over the samples inside `window` (each sample worth the time to the
 * next, as V8's own tools count it), idle left out.
 */
export function selfTimeInWindow(profile: CpuProfile, window: ProfileWindow, key: (frame: ProfileFrame) => string): Map<string, number> {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const totals = new Map<string, number>();
  let atUs = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    atUs += profile.timeDeltas[i] ?? 0;
    if (atUs < window.fromUs) continue;
    if (atUs > window.toUs) break;
    const frame = frames.get(profile.samples[i] as number);
    if (!frame || frame.functionName === '(idle)') continue;
    const name = key(frame);
    totals.set(name, (totals.get(name) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  return totals;
}

/** Sums `from` into `into`, each value multiplied by `factor`. */
export function addScaled(into: Map<string, number>, from: ReadonlyMap<string, number>, factor: number): void {
  for (const [key, value] of from) into.set(key, (into.get(key) ?? 0) + value * factor);
}

export interface ProfileDifference {
  key: string;
  a: number;
  b: number;
}

/** The `count` keys whose per-review time differs most between `a` and `b`, largest difference first. */
export function topDifferences(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>, count: number): ProfileDifference[] {
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys]
    .map((key) => ({ key, a: a.get(key) ?? 0, b: b.get(key) ?? 0 }))
    .sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a))
    .slice(0, count);
}

/**
 * The factor that makes a window's sampled time (running plus waiting for a CPU) the main
 * thread's run time (/proc/<pid>/schedstat): the wait, spread in proportion to what ran.
 */
export function scaleToRunTime(sampled: ReadonlyMap<string, number>, runUs: number): number {
  const sampledUs = total(sampled);
  return sampledUs > 0 ? Math.min(1, runUs / sampledUs) : 0;
}

/** The total of a per-key table. */
export function total(table: ReadonlyMap<string, number>): number {
  let sum = 0;
  for (const value of table.values()) sum += value;
  return sum;
}
