/**
 * kubectl for tests: found in .tools/bin or on PATH (a clear error when it is not), run through /bin/sh as a
 * user types the walk-through's commands, each run bounded by a deadline, the output kept.
 */
import { spawn } from 'node:child_process';
import { delimiter } from 'node:path';
import { LOCAL_TOOLS_DIR, requireTool } from './tools.js';

export interface CommandResult {
  command: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * PATH for the shell that runs the walk-through's commands: the project's .tools/bin first, then this
 * process's PATH, the order findTool searches, so `kubectl` in a command is the one found.
 */
export function shellPath(): string {
  return [LOCAL_TOOLS_DIR, process.env['PATH'] ?? ''].join(delimiter);
}

/** Why kubectl cannot be run (naming the setup command), or undefined when it can. */
export function kubectlMissing(): string | undefined {
  try {
    requireTool('kubectl');
    return undefined;
  } catch (error) {
    return `${(error as Error).message}; the local-cluster tests drive the install with it`;
  }
}

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
