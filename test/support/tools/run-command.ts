/**
 * A command run to completion under a deadline, for the tests that drive real tools (npm, tsc,
 * docker). A failure or a timeout is an error that names the command and ends with the tail of
 * its output, so a red test says what went wrong without a rerun.
 */
import { spawn } from 'node:child_process';
import { deadlineSignal } from '../deadline.js';

export interface CommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Resolve with a non-zero exit code instead of rejecting. */
  allowFailure?: boolean;
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

const TAIL = 3000;

export function runCommand(command: string, args: readonly string[], options: CommandOptions): Promise<CommandResult> {
  const deadline = deadlineSignal(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  const started = performance.now();
  const label = `${command} ${args.join(' ')}`.slice(0, 300);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, signal, killSignal: 'SIGKILL', stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return reject(new Error(`${command} not found (running ${label})`));
      if (deadline.aborted) return reject(new Error(`${label}: no exit within ${options.timeoutMs} ms (killed); output so far:\n${(stdout + stderr).slice(-TAIL)}`));
      reject(new Error(`${label}: ${error.message}`));
    });
    child.on('close', (code) => {
      if (signal.aborted) return; // reported through 'error'
      const result = { code, stdout, stderr, ms: performance.now() - started };
      if (code === 0 || options.allowFailure) return resolve(result);
      reject(new Error(`${label} exited ${code}:\n${(stdout + stderr).slice(-TAIL)}`));
    });
  });
}

/**
 * The environment for a nested npm, tsc or node: this process's, less what npm and tap put there
 * for themselves (npm's idea of the local prefix would point an install at this repository;
 * tap's NODE_OPTIONS would load its hooks into every child).
 */
export function cleanEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && !/^npm_config_(cache|userconfig|globalconfig|registry)$/i.test(key)) continue;
    if (key === 'NODE_OPTIONS' || key.startsWith('TAP') || key.startsWith('_TAPJS')) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}
