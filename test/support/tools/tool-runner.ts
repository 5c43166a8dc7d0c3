/** Runs a tool sub-command in-process (fast) or as the compiled binary (real stdin, exit code). */
import { COMMANDS } from '../../../src/commands/index.js';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../../src/config/load-config.js';
import { unhookedNode } from '../../../local-cluster/util/unhooked-node.js';

export interface ToolRun {
  code: number;
  stdout: string;
  stderr: string;
}

const MAIN = fileURLToPath(new URL('../../../dist/src/main.js', import.meta.url));

/** The sub-command through loadConfig and its command's run, as main.ts would run it. */
export async function runToolInProcess(argv: string[], stdin = ''): Promise<ToolRun> {
  const loaded = loadConfig(argv, { env: {}, readFile: () => undefined, exists: () => false, hostname: () => 'test' }, COMMANDS);
  if (loaded.kind !== 'run') return { code: 2, stdout: '', stderr: loaded.kind === 'invalid' ? loaded.problems.join('\n') : '' };
  let stdout = '';
  let stderr = '';
  const io = { stdout: (s: string) => void (stdout += s), stderr: (s: string) => void (stderr += s), stdin: Readable.from([stdin]) };
  const startProcess = (): never => {
    throw new Error(`${loaded.command} runs as a process: use runToolBinary`);
  };
  const code = await loaded.spec.run({ config: loaded.config, options: loaded.options, io, startProcess });
  return { code, stdout, stderr };
}

/** The compiled binary as a child process (npm run build first); bounded by `timeoutMs`. */
export function runToolBinary(argv: string[], stdin = '', timeoutMs = 60_000): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const node = unhookedNode([MAIN, ...argv]);
    const child = spawn(node.command, node.args, { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' }, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** A fresh folder removed when the test ends. */
export async function tempDir(t: { teardown(fn: () => unknown): void }, prefix = 'kas-tool-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
