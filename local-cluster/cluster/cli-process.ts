/**
 * `npm run local-cluster` as the end-to-end tests run it: the compiled CLI as a child process on
 * a free port with its own directory, its output kept and parsed (the kubeconfig path, the
 * container exits the kubelet reports), stopped with SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { repositoryRoot } from '../util/repository-root.js';
import { unhookedNode } from '../util/unhooked-node.js';

const SLOW_START = 4;
export const CLI_JS = join(repositoryRoot(), 'dist', 'local-cluster', 'cli', 'local-cluster.js');

export interface ContainerExitLine {
  namespace: string;
  pod: string;
  code: number | null;
  signal: string | null;
}

export interface ApiCredentials {
  url: string;
  caPem: string;
  token: string;
}

export class LocalClusterProcess {
  readonly process: ChildProcess;
  output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(dir: string) {
    // Without tap's hooks (see unhookedNode): the cluster is the test's environment, not code under test.
    const env = { PATH: process.env['PATH'], HOME: process.env['HOME'] };
    // Its own process group, so that a last-resort SIGKILL reaches the Pods' processes too; an IPC
    // channel, so that the CLI stops its cluster when this process dies without a teardown.
    // --slow-start: the manifests' 60 s startup budget, four times over, as STARTUP_MS allows for a busy machine.
    const node = unhookedNode([CLI_JS, '--port', '0', '--dir', dir, '--slow-start', String(SLOW_START)]);
    this.process = spawn(node.command, node.args, { cwd: repositoryRoot(), env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], detached: true });
    this.process.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.process.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.exited = once(this.process, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  }

  /** Resolves with the first match of `pattern` in the output, past or future; rejects at the deadline or on exit. */
  async waitFor(pattern: RegExp, timeoutMs: number, what: string): Promise<RegExpMatchArray> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const match = this.output.match(pattern);
      if (match) return match;
      if (this.process.exitCode !== null || this.process.signalCode !== null) throw new Error(`the local cluster exited before ${what}; output:\n${this.output}`);
      if (performance.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms; output:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The kubelet's `container exited` lines so far. */
  exits(): ContainerExitLine[] {
    const found: ContainerExitLine[] = [];
    for (const m of this.output.matchAll(/pod ([^/\s]+)\/(\S+): container exited with (?:code (\S+)|signal (\S+))/g)) {
      found.push({ namespace: m[1] ?? '', pod: m[2] ?? '', code: m[3] === undefined ? null : Number(m[3]), signal: m[4] ?? null });
    }
    return found;
  }

  /**
   * When the kubelet sent a Pod's container SIGTERM and saw it exit (Date.now() scale), from the
   * CLI's time stamps (UTC time of day with milliseconds).
   */
  stops(namespace: string, pod: string): { sigterm?: number; exit?: number } {
    const found: { sigterm?: number; exit?: number } = {};
    const name = pod.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const m of this.output.matchAll(new RegExp(`^(\\d\\d:\\d\\d:\\d\\d\\.\\d{3}) pod ${namespace}/${name}: (SIGTERM|container exited)`, 'gm'))) {
      const at = timeOfDay(m[1] ?? '');
      if (m[2] === 'SIGTERM') found.sigterm ??= at;
      else found.exit = at;
    }
    return found;
  }

  /** Resolves once the kubelet reported every one of `pods` exiting. */
  async waitForExits(pods: readonly string[], timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const exited = new Set(this.exits().map((e) => e.pod));
      const missing = pods.filter((pod) => !exited.has(pod));
      if (missing.length === 0) return;
      if (performance.now() > deadline) throw new Error(`no container exit of ${missing.join(', ')} within ${timeoutMs} ms; output:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** SIGTERM, then SIGKILL to the CLI and its Pods if it has not exited by the deadline. */
  async stop(timeoutMs = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      try {
        if (this.process.pid !== undefined) process.kill(-this.process.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }, timeoutMs);
    const exit = await this.exited;
    clearTimeout(timer);
    if (this.process.connected) this.process.disconnect();
    return exit;
  }
}

/** HH:MM:SS.mmm (UTC, today or just before midnight) as Date.now() would have read. */
function timeOfDay(text: string): number {
  const now = new Date();
  const at = Date.parse(`${now.toISOString().slice(0, 10)}T${text}Z`);
  return at > now.getTime() + 3_600_000 ? at - 86_400_000 : at;
}

/** The API address, CA and token from a kubeconfig the local cluster wrote. */
export async function readCredentials(kubeconfig: string): Promise<ApiCredentials> {
  const config = parseYaml(await readFile(kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  const cluster = config.clusters[0]?.cluster;
  const token = config.users[0]?.user.token;
  if (!cluster || !token) throw new Error(`${kubeconfig} has no cluster or token`);
  return { url: cluster.server, caPem: Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8'), token };
}
