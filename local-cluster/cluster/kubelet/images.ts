/**
 * The local kubelet's images: what a container of an image runs, as a Node process on this
 * machine. This repository's image (kube-admission-server, any registry or tag) is the working
 * tree: `ENTRYPOINT ["node", "dist/src/main.js"]` with WORKDIR /app standing for the repository
 * root. Any other image is read from the local docker engine (`docker image inspect`): its
 * Entrypoint, Cmd, WorkingDir, Env and labels, and its WORKDIR copied out once per image ID;
 * it runs when its command resolves to a Node entry point (see nodeCommand). Without docker, or
 * for an image that is not there, the container waits with the reason.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** An image's runtime configuration, with the host folder that stands for its WorkingDir. */
export interface LocalImage {
  entrypoint: readonly string[];
  cmd: readonly string[];
  workingDir: string;
  /** The image's WorkingDir, on this machine. */
  root: string;
  env: readonly string[];
  labels: Readonly<Record<string, string>>;
}

export type ImageResolution = { image: LocalImage } | { unresolved: string };

export const REPOSITORY_IMAGE = 'kube-admission-server';
/** Docker commands are bounded: a hung engine must not hold a Pod forever (the worker retries). */
const DOCKER_TIMEOUT_MS = 120_000;

/** The image's repository name without registry, tag or digest. */
export function imageName(image: string): string {
  const withoutDigest = image.split('@')[0] ?? '';
  const last = withoutDigest.split('/').at(-1) ?? '';
  return last.split(':')[0] ?? '';
}

interface InspectedConfig {
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  WorkingDir?: string;
  Env?: string[] | null;
  Labels?: Record<string, string> | null;
}

/** Resolves images to what runs here; copies of images' WORKDIRs live under `cacheDir`. */
export class LocalImages {
  readonly #copies = new Map<string, Promise<string>>();

  constructor(
    private readonly repoRoot: string,
    private readonly cacheDir: string,
    private readonly docker = 'docker',
  ) {}

  async resolve(image: string): Promise<ImageResolution> {
    if (imageName(image) === REPOSITORY_IMAGE) {
      return { image: { entrypoint: ['node', 'dist/src/main.js'], cmd: [], workingDir: '/app', root: this.repoRoot, env: [], labels: {} } };
    }
    let id: string;
    let config: InspectedConfig;
    try {
      const { stdout } = await run(this.docker, ['image', 'inspect', '--format', '{{ json .Id }}\t{{ json .Config }}', image], { timeout: DOCKER_TIMEOUT_MS });
      const [idJson, configJson] = stdout.trim().split('\t');
      id = JSON.parse(idJson!) as string;
      config = JSON.parse(configJson!) as InspectedConfig;
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no docker engine on this machine' : `docker does not have it (${firstLine(error)})`;
      return { unresolved: `the local cluster runs this repository's image and images of the local docker engine; ${image}: ${why}` };
    }
    const workingDir = config.WorkingDir || '/';
    try {
      const root = await this.#copyOut(id, workingDir);
      return { image: { entrypoint: config.Entrypoint ?? [], cmd: config.Cmd ?? [], workingDir, root, env: config.Env ?? [], labels: config.Labels ?? {} } };
    } catch (error) {
      return { unresolved: `${image}: cannot copy its ${workingDir} out of the image: ${firstLine(error)}` };
    }
  }

  /** The image's WorkingDir copied to the cache once per image ID (a rebuilt tag is a new ID). */
  #copyOut(id: string, workingDir: string): Promise<string> {
    const key = createHash('sha256').update(`${id}\0${workingDir}`).digest('hex').slice(0, 16);
    let copy = this.#copies.get(key);
    if (!copy) {
      copy = this.#copy(id, workingDir, join(this.cacheDir, key));
      this.#copies.set(key, copy);
      copy.catch(() => this.#copies.delete(key));
    }
    return copy;
  }

  async #copy(id: string, workingDir: string, into: string): Promise<string> {
    const staging = `${into}.partial`;
    await rm(staging, { recursive: true, force: true });
    await mkdir(this.cacheDir, { recursive: true });
    const { stdout } = await run(this.docker, ['create', id], { timeout: DOCKER_TIMEOUT_MS });
    const container = stdout.trim();
    try {
      await run(this.docker, ['cp', `${container}:${workingDir.replace(/\/?$/, '/')}.`, staging], { timeout: DOCKER_TIMEOUT_MS });
    } finally {
      await run(this.docker, ['rm', '-f', container], { timeout: DOCKER_TIMEOUT_MS }).catch(() => undefined);
    }
    await rm(into, { recursive: true, force: true });
    await rename(staging, into);
    return into;
  }
}

function firstLine(error: unknown): string {
  const stderr = (error as { stderr?: string }).stderr?.trim();
  return (stderr || (error instanceof Error ? error.message : String(error))).split('\n')[0] ?? '';
}
