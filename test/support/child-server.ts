import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from test/support/ or from its compiled copy in dist/test/support/. */
export function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}

/** The compiled entry point (npm test builds first). */
export const MAIN_JS = join(repositoryRoot(), 'dist', 'src', 'main.js');

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/**
 * The compiled server as a real child process (process.execPath, so the suite runs it under
 * the same Node as itself), with its JSON log lines parsed and awaitable.
 */
export class ChildServer {
  readonly process: ChildProcess;
  readonly logs: LogLine[] = [];
  stderr = '';
  stdout = '';
  readonly #waiters = new Set<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;

  constructor(args: readonly string[], env: Record<string, string | undefined> = {}, cwd?: string) {
    this.process = spawn(process.execPath, [MAIN_JS, ...args], {
      cwd,
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let pending = '';
    this.process.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const text of lines) this.#onLine(text);
    });
    this.process.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = once(this.process, 'exit').then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
      atMs: performance.now(),
    }));
  }

  #onLine(text: string): void {
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    this.logs.push(line);
    for (const waiter of this.#waiters) {
      if (waiter.match(line)) {
        this.#waiters.delete(waiter);
        waiter.resolve(line);
      }
    }
  }

  /** Resolves with the first log line (past or future) that matches; rejects at the deadline or on exit. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs = 20_000): Promise<LogLine> {
    const seen = this.logs.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = { match, resolve: (line: LogLine) => (clearTimeout(timer), resolve(line)) };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`no matching log line within ${timeoutMs} ms; stderr: ${this.stderr.slice(-500)}; last logs: ${JSON.stringify(this.logs.slice(-5))}`));
      }, timeoutMs);
      this.#waiters.add(waiter);
      void this.exited.then(() => {
        if (!this.#waiters.has(waiter)) return;
        this.#waiters.delete(waiter);
        clearTimeout(timer);
        reject(new Error(`the server exited before the log line; stderr: ${this.stderr.slice(-500)}; last logs: ${JSON.stringify(this.logs.slice(-5))}`));
      });
    });
  }

  waitForMessage(msg: string, timeoutMs?: number): Promise<LogLine> {
    return this.waitForLog((line) => line.msg === msg, timeoutMs);
  }

  /** Sends `signal` and waits for the exit, killing the process if it outlives `timeoutMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
    const started = performance.now();
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill(signal);
    const timer = setTimeout(() => this.process.kill('SIGKILL'), timeoutMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return { code: exit.code, signal: exit.signal, ms: exit.atMs - started };
  }
}
