/**
 * The Docker engine as the image test drives it: every command bounded, and an engine or base
 * image that is not there is an error naming the command that sets it up (`npm run setup`), never
 * a skipped test.
 */
import { requireTool } from '../tools/tools.js';
import { runCommand, type CommandResult } from '../tools/run-command.js';

export const SETUP_COMMAND = '`npm run setup` as root (installs docker.io and debootstrap, starts dockerd, makes the base image: scripts/setup.sh)';

export function docker(args: readonly string[], timeoutMs = 60_000, options: { allowFailure?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<CommandResult> {
  return runCommand(requireTool('docker'), args, { timeoutMs, ...options });
}

export async function requireEngine(): Promise<string> {
  const info = await docker(['info', '--format', '{{ .ServerVersion }} {{ .Driver }}'], 30_000, { allowFailure: true });
  if (info.code !== 0) throw new Error(`the Docker engine does not answer (${info.stderr.trim().split('\n').at(-1)}): run ${SETUP_COMMAND}`);
  return info.stdout.trim();
}

export async function requireImage(tag: string, why: string): Promise<void> {
  const inspected = await docker(['image', 'inspect', '--format', '{{ .Id }}', tag], 30_000, { allowFailure: true });
  if (inspected.code !== 0) throw new Error(`the image ${tag} (${why}) is missing: run ${SETUP_COMMAND}`);
}

export interface ImageConfig {
  User: string;
  Entrypoint: string[] | null;
  Cmd?: string[] | null;
  Env: string[];
  Labels: Record<string, string> | null;
  WorkingDir: string;
  ExposedPorts: Record<string, unknown> | null;
}

export async function imageConfig(tag: string): Promise<{ config: ImageConfig; sizeBytes: number }> {
  const { stdout } = await docker(['image', 'inspect', '--format', '{{ json .Config }}\t{{ .Size }}', tag]);
  const [config, size] = stdout.trim().split('\t');
  return { config: JSON.parse(config!) as ImageConfig, sizeBytes: Number(size) };
}

/** Every path in the image's file system as a container of it sees it (`docker export`), without a leading slash. */
export async function imageFiles(tag: string): Promise<Set<string>> {
  const created = await docker(['create', tag]);
  const id = created.stdout.trim();
  try {
    const listing = await runCommand('bash', ['-c', 'set -o pipefail; "$1" export "$2" | tar -t', 'list', requireTool('docker'), id], { timeoutMs: 5 * 60_000 });
    return new Set(listing.stdout.split('\n').filter((line) => line !== '').map((line) => line.replace(/\/$/, '')));
  } finally {
    await docker(['rm', '-f', id], 60_000, { allowFailure: true });
  }
}
