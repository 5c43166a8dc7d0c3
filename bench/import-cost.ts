/**
 * What importing one module costs a fresh process: `node dist/bench/import-cost.js SPECIFIER
 * [RUNS]` resolves SPECIFIER from the working directory (a package name, or a file path), imports
 * it RUNS times (default 7), each in a new Node process, and prints the medians of the CPU time
 * (user + system, all threads), the wall time and the RSS after the import. Compare two versions
 * of a package by running it in two folders that hold them, alternating, in the same minutes.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from './stats.js';

const CHILD = `
const c0 = process.cpuUsage(); const t0 = performance.now();
await import(process.argv[1]);
const t1 = performance.now(); const c = process.cpuUsage(c0);
process.stdout.write(JSON.stringify({ cpuMs: (c.user + c.system) / 1000, wallMs: t1 - t0, rssMb: process.memoryUsage().rss / 1e6 }));
`;

function resolveUrl(specifier: string): string {
  try {
    return pathToFileURL(createRequire(`${process.cwd()}/`).resolve(specifier)).href;
  } catch {
    return pathToFileURL(resolve(specifier)).href;
  }
}

const [specifier, runsText = '7'] = process.argv.slice(2);
if (!specifier) {
  process.stderr.write('usage: node dist/bench/import-cost.js SPECIFIER [RUNS]\n');
  process.exitCode = 2;
} else {
  const url = resolveUrl(specifier);
  const runs = Array.from({ length: Number(runsText) }, () => JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', CHILD, url], { encoding: 'utf8', env: { PATH: process.env['PATH'] } })) as { cpuMs: number; wallMs: number; rssMb: number });
  const round = (values: number[]): number => Math.round(median(values) * 10) / 10;
  process.stdout.write(
    `${JSON.stringify({ specifier, url, node: process.version, runs: runs.length, cpuMs: round(runs.map((r) => r.cpuMs)), wallMs: round(runs.map((r) => r.wallMs)), rssMb: round(runs.map((r) => r.rssMb)), cpuEachMs: runs.map((r) => Math.round(r.cpuMs)) })}\n`,
  );
}
