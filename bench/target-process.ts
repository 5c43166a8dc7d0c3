/** A server under test in its own process (bench/admission-target.ts), optionally under a wrapper such as valgrind. */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StartMessage, TargetMode } from './admission-target.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Node flags of every server under test. V8's default young generation (16 MB semi-spaces) grows
 * RSS by ~35 MB under this load for no measurable throughput; 4 MB semi-spaces keep the server
 * under the RSS target. The production image should run with the same flag (NODE_OPTIONS).
 */
export const SERVER_NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=4').split(' ').filter(Boolean);

export interface Target {
  child: ChildProcess;
  port: number;
}

export interface TargetOptions {
  /** Node flags of the server; SERVER_NODE_FLAGS unless given. */
  nodeFlags?: readonly string[];
  /** Overrides of the webhook server's connection limits (fastify mode). */
  connectionLimits?: StartMessage['connectionLimits'];
  /** Runs node under this program: `<command> ...args node <flags> admission-target.js`. */
  wrapper?: { command: string; args: string[] };
  /** How long the server may take to listen (a wrapper like valgrind is slow to start). */
  startTimeoutMs?: number;
}

export async function startTarget(mode: TargetMode, tls: { certPem: string; keyPem: string }, options: TargetOptions = {}): Promise<Target> {
  const nodeFlags = options.nodeFlags ?? SERVER_NODE_FLAGS;
  const wrapped = options.wrapper
    ? { execPath: options.wrapper.command, execArgv: [...options.wrapper.args, process.execPath, ...nodeFlags] }
    : { execArgv: [...nodeFlags] };
  const child = fork(path.join(here, 'admission-target.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], ...wrapped });
  const ready = once(child, 'message') as Promise<[{ port: number }]>;
  const start: StartMessage = { mode, ...tls, connectionLimits: options.connectionLimits };
  child.send(start);
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`server under test did not start in ${startTimeoutMs / 1000} s`)), startTimeoutMs);
  });
  try {
    const [{ port }] = await Promise.race([ready, timeout]);
    return { child, port };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** SIGTERM, then SIGKILL if it has not exited after `graceMs` (a profiled server writes its profile first). */
export async function stopTarget(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(killer);
}

/** Resident set size of a process, from /proc. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status);
  return kb ? Number(kb[1]) / 1024 : 0;
}
