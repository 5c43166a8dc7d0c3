/**
 * The server as users run it, in its own process: a compiled entry (the image's bundle, or an
 * `init` project's dist/src/main.js) in local mode with a policy file, the image's environment
 * (NODE_ENV=production, NODE_OPTIONS with the bench's node flags) and production flags at log
 * level info. It generates its CA into a temporary --cert-dir; the bench trusts that CA.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVER_NODE_FLAGS } from './target-process.js';

/** A server under test that is the shipped binary or a project's start. */
export interface BinaryTarget {
  child: ChildProcess;
  port: number;
  /** The paths kube-apiserver calls for the validating and the mutating entry (the ready line's `registered`). */
  paths: { validate: string; mutate: string };
  /** The CA it generated, which the bench trusts. */
  caPem: string;
}

export interface BinaryStart {
  /** The script node runs. */
  entry: string;
  cwd: string;
  policyFile: string;
  /** Its --cert-dir; also its HOME, so no kubeconfig of this machine's is found. */
  certDir: string;
  /** Node flags on the command line besides NODE_OPTIONS (--cpu-prof...). */
  extraNodeFlags?: readonly string[];
  startTimeoutMs?: number;
}

/** How `grouping` is written in the bench's policy files: `auto` (the default users run) or `none`. */
export type Grouping = 'auto' | 'none';

/** Query of every call, as kube-apiserver appends it. */
const TIMEOUT_QUERY = '?timeout=10s';

/**
 * The bench's policy for the binary: one built-in rule per path, a validating one in enforce mode
 * and a mutating one that adds one label to the bench Pod, as the in-process target's handlers do.
 */
export function builtInRulesPolicy(grouping: Grouping): string {
  return [
    'apiVersion: kube-admission-server/v1',
    'kind: Policy',
    `grouping: ${grouping}`,
    'webhooks:',
    '  - name: require-labels',
    '    kind: requireLabels',
    '    mode: enforce',
    '    params:',
    '      labels:',
    '        - key: app',
    '  - name: default-labels',
    '    kind: defaultLabels',
    '    params:',
    '      labels:',
    '        policy.example.com/checked: "true"',
    '',
  ].join('\n');
}

/** A policy with no rules, for a program that serves its own handlers only. */
export function noRulesPolicy(grouping: Grouping): string {
  return ['apiVersion: kube-admission-server/v1', 'kind: Policy', `grouping: ${grouping}`, 'webhooks: []', ''].join('\n');
}

/** The label every mutating path of the bench adds (the built-in rule, the init project's handler, the in-process target's). */
export const ADDED_LABEL = { key: 'policy.example.com/checked', value: 'true' };

/** The validating and mutating paths of a `ready` log line's `registered` list, each with kube-apiserver's query. */
export function registeredPaths(readyLine: { registered?: unknown }): { validate: string; mutate: string } {
  const registered = Array.isArray(readyLine.registered) ? (readyLine.registered as unknown[]).filter((p): p is string => typeof p === 'string') : [];
  const validate = registered.filter((p) => p.startsWith('/validate/'));
  const mutate = registered.filter((p) => p.startsWith('/mutate/'));
  if (validate.length !== 1 || mutate.length !== 1) {
    throw new Error(`expected one validating and one mutating path in the ready line's registered list, got ${JSON.stringify(readyLine.registered)}`);
  }
  return { validate: `${validate[0]}${TIMEOUT_QUERY}`, mutate: `${mutate[0]}${TIMEOUT_QUERY}` };
}

/** Starts the entry and resolves once it logged `ready`; its log is read (and dropped) for as long as it runs. */
export function startBinary(start: BinaryStart): Promise<BinaryTarget> {
  const args = [...(start.extraNodeFlags ?? []), start.entry, '--policy-file', start.policyFile, '--cert-dir', start.certDir, '--port', '0', '--health-port', '0', '--log-level', 'info'];
  const env = { PATH: process.env.PATH, HOME: start.certDir, NODE_ENV: 'production', NODE_OPTIONS: SERVER_NODE_FLAGS.join(' ') };
  const child = spawn(process.execPath, args, { cwd: start.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const timeoutMs = start.startTimeoutMs ?? 120_000;
  return new Promise((resolve, reject) => {
    let pending = '';
    let stderr = '';
    const lastLines: string[] = [];
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${start.entry}: ${why}; stderr: ${stderr.slice(-1000)}; last log lines: ${lastLines.join('\n')}`));
    };
    const timer = setTimeout(() => fail(`not ready within ${timeoutMs / 1000} s`), timeoutMs);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (settled) return;
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const text of lines) {
        lastLines.push(text.slice(0, 600));
        if (lastLines.length > 5) lastLines.shift();
        let line: { msg?: string; port?: unknown; registered?: unknown };
        try {
          line = JSON.parse(text) as typeof line;
        } catch {
          continue;
        }
        if (line.msg !== 'ready') continue;
        try {
          const target = { child, port: Number(line.port), paths: registeredPaths(line), caPem: readFileSync(path.join(start.certDir, 'ca.crt'), 'utf8') };
          settled = true;
          clearTimeout(timer);
          resolve(target);
        } catch (error) {
          fail((error as Error).message);
        }
        return;
      }
    });
    child.on('error', (error) => fail(error.message));
    child.on('exit', (code, signal) => fail(`exited (${code ?? signal}) before it was ready`));
  });
}
