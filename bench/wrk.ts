import { spawn, spawnSync } from 'node:child_process';

export interface WrkResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Socket errors and non-2xx/3xx answers reported by wrk. */
  errors: number;
}

export function wrkAvailable(): boolean {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return !probe.error;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function latencyMs(output: string, percentile: string): number {
  const match = new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(output);
  if (!match) throw new Error(`wrk output has no ${percentile}% latency:\n${output}`);
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number);
}

function number(output: string, pattern: RegExp): number {
  const match = pattern.exec(output);
  return match ? Number(match[1]) : 0;
}

export function parseWrk(output: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
  if (!rps) throw new Error(`wrk output has no Requests/sec:\n${output}`);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const errors =
    (socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0) +
    number(output, /Non-2xx or 3xx responses: (\d+)/);
  return {
    requestsPerSecond: Number(rps[1]),
    p50Ms: latencyMs(output, '50'),
    p99Ms: latencyMs(output, '99'),
    requests: number(output, /(\d+) requests in/),
    errors,
  };
}

export interface WrkRun {
  url: string;
  script: string;
  connections: number;
  threads: number;
  durationSeconds: number;
}

/** Runs wrk to completion (bounded by its own duration plus a grace period) and parses its report. */
export function runWrk(run: WrkRun): Promise<WrkResult> {
  const args = ['-t', String(run.threads), '-c', String(run.connections), '-d', `${run.durationSeconds}s`, '--latency', '-s', run.script, run.url];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const guard = setTimeout(() => child.kill('SIGKILL'), (run.durationSeconds + 30) * 1000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      if (code !== 0) reject(new Error(`wrk exited with ${code}:\n${output}`));
      else {
        try {
          resolve(parseWrk(output));
        } catch (error) {
          reject(error as Error);
        }
      }
    });
  });
}
