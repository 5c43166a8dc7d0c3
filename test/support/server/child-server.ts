import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { onExit } from 'signal-exit';
import { EVENT_MS, EXIT_MS, STARTUP_MS, within } from '../deadline.js';
import { repositoryRoot } from '../../../local-cluster/util/repository-root.js';
import { unhookedNode } from '../../../local-cluster/util/unhooked-node.js';
import { readLogLine } from '../logs/log-lines.js';

/** The compiled entry point (npm test builds first). */
export const MAIN_JS = join(repositoryRoot(), 'dist', 'src', 'main.js');

/**
 * Environment that preloads intercept-service-dial.js (compiled, like the server) into a child:
 * its TLS dials for `serverName` (its self-check) go to 127.0.0.1:`port`.
 */
export function interceptServiceDial(serverName: string, port: number): Record<string, string> {
  const preload = pathToFileURL(join(repositoryRoot(), 'dist', 'test', 'support', 'kube', 'intercept-service-dial.js')).href;
  return { NODE_OPTIONS: `--import=${preload}`, KAS_INTERCEPT_SERVER_NAME: serverName, KAS_INTERCEPT_PORT: String(port) };
}

/** Both listeners on ports the OS picks: no window in which a parallel test can take them. */
export const ANY_PORTS: readonly string[] = ['--port', '0', '--health-port', '0'];

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** performance.now() at the exit. */
  atMs: number;
}

/** Children still running; killed when the test process ends in any way (a tap timeout included). */
const running = new Set<ChildProcess>();
onExit(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** A line of the server's log: `"level":"info"` and an ISO-8601 `time` (the default --log-format json). */
export interface LogLine {
  level: string;
  time: string;
  msg: string;
  [key: string]: unknown;
}

/** A log line's time as epoch milliseconds (whole milliseconds, as the server writes them). */
export function logTimeMs(line: LogLine): number {
  const ms = Date.parse(line.time);
  if (Number.isNaN(ms)) throw new Error(`log line without an ISO-8601 time: ${JSON.stringify(line)}`);
  return ms;
}

/**
 * The compiled server as a real child process (process.execPath, so the suite runs it under
 * the same Node as itself), with its JSON log lines parsed (no key twice in a line) and awaitable.
 */
export class ChildServer {
  readonly process: ChildProcess;
  readonly logs: LogLine[] = [];
  stderr = '';
  stdout = '';
  readonly #waiters = new Set<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }>();
  /** Settles on exit with no deadline of its own: tests await exit() or stop() instead. */
  readonly exited: Promise<ChildExit>;
  readonly #label: string;

  /** `entry`: the script to run, the compiled server by default (a program built on the library, say). */
  constructor(args: readonly string[], env: Record<string, string | undefined> = {}, cwd?: string, entry: string = MAIN_JS) {
    // As it ships: without tap's loader (unhookedNode), with only the NODE_OPTIONS a test gives.
    const node = unhookedNode([entry, ...args], env['NODE_OPTIONS']);
    this.process = spawn(node.command, node.args, {
      cwd,
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#label = `the server process ${this.process.pid} (${args.join(' ').slice(0, 120)})`;
    running.add(this.process);
    let pending = '';
    this.process.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const text of lines) this.#onLine(text);
    });
    this.process.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = once(this.process, 'exit').then(([code, signal]) => {
      running.delete(this.process);
      return { code: code as number | null, signal: signal as NodeJS.Signals | null, atMs: performance.now() };
    });
  }

  #onLine(text: string): void {
    // A line that repeats a key fails the running test (log-lines.ts).
    const line = readLogLine(text, this.#label) as LogLine | undefined;
    if (!line) return;
    this.logs.push(line);
    for (const waiter of this.#waiters) {
      if (waiter.match(line)) {
        this.#waiters.delete(waiter);
        waiter.resolve(line);
      }
    }
  }

  /** Resolves with the first log line (past or future) that matches; rejects at the deadline or on exit. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs = EVENT_MS): Promise<LogLine> {
    const seen = this.logs.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = { match, resolve: (line: LogLine) => (clearTimeout(timer), resolve(line)) };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`no matching log line from ${this.#label} within ${timeoutMs} ms; stderr: ${this.stderr.slice(-500)}; last logs: ${JSON.stringify(this.logs.slice(-5))}`));
      }, timeoutMs);
      this.#waiters.add(waiter);
      void this.exited.then(() => {
        if (!this.#waiters.has(waiter)) return;
        this.#waiters.delete(waiter);
        clearTimeout(timer);
        reject(new Error(`${this.#label} exited before the log line; stderr: ${this.stderr.slice(-500)}; last logs: ${JSON.stringify(this.logs.slice(-5))}`));
      });
    });
  }

  waitForMessage(msg: string, timeoutMs?: number): Promise<LogLine> {
    return this.waitForLog((line) => line.msg === msg, timeoutMs);
  }

  /** The ports both listeners bound, from their log lines (start with ANY_PORTS). */
  async listening(timeoutMs = STARTUP_MS): Promise<{ port: number; healthPort: number }> {
    const [webhook, health] = await Promise.all([
      this.waitForMessage('webhook server listening', timeoutMs),
      this.waitForMessage('health server listening', timeoutMs),
    ]);
    return { port: Number(webhook['port']), healthPort: Number(health['port']) };
  }

  /** Resolves with the exit of a process expected to end by itself (a failing startup, --help). */
  exit(timeoutMs = STARTUP_MS): Promise<ChildExit> {
    return within(timeoutMs, `the exit of ${this.#label}`, this.exited);
  }

  /**
   * Sends `signal` and waits for the exit, killing the process if it outlives `timeoutMs`: a
   * shutdown that hangs shows as an exit by SIGKILL after `timeoutMs`, which the caller's
   * assertions on code and time catch.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
    const started = performance.now();
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill(signal);
    const timer = setTimeout(() => this.process.kill('SIGKILL'), timeoutMs);
    try {
      const exit = await within(timeoutMs + EXIT_MS, `the exit of ${this.#label} after ${signal}`, this.exited);
      return { code: exit.code, signal: exit.signal, ms: exit.atMs - started };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Starts the compiled server in local mode (no cluster) on `certDir`; killed in `t.teardown`. */
export async function startLocalServer(
  t: { teardown(fn: () => unknown): void },
  certDir: string,
  extraArgs: readonly string[] = [],
): Promise<{ child: ChildServer; port: number; healthPort: number }> {
  const child = new ChildServer([...ANY_PORTS, '--cert-dir', certDir, ...extraArgs]);
  t.teardown(() => child.stop('SIGKILL'));
  const { port, healthPort } = await child.listening();
  await child.waitForMessage('ready', STARTUP_MS);
  return { child, port, healthPort };
}
