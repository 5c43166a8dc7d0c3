/**
 * The "container runtime": a container runs as a Node process on this machine, its image
 * resolved by LocalImages (this repository's working tree, or an image of the local docker
 * engine) to a Node entry point: the command kubelet would exec (the container's command and
 * args over the image's Entrypoint and Cmd, as Kubernetes combines them), past a known init
 * wrapper, must be `node [options] SCRIPT [args]`, or the image names its script in the label
 * NODE_ENTRY_LABEL. Absolute paths in args and env that fall under a volumeMount (or the image's
 * WORKDIR) are translated to the host folder standing for it, since there is no mount namespace.
 */
import { basename, join, posix } from 'node:path';
import { records } from '../workload-objects.js';
import type { LocalImage } from './images.js';

type Json = Record<string, unknown>;

/** `LABEL kube-admission-server.node-entry=dist/server.js`: the image runs `node dist/server.js` (with the container's args, else its Cmd). */
export const NODE_ENTRY_LABEL = 'kube-admission-server.node-entry';
/** Init wrappers in front of node in images (`docker-entrypoint.sh` of the node images, tini, dumb-init), with the arguments they take. */
const WRAPPERS: Readonly<Record<string, number>> = { 'docker-entrypoint.sh': 0, tini: 0, 'dumb-init': 0 };
/** Node options that take the next word as their value. */
const OPTIONS_WITH_VALUE = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '--env-file', '-C', '--conditions', '--title', '--stack-size']);

export interface Mount {
  mountPath: string;
  hostPath: string;
}

/** `/etc/x/policy/policy.yaml` under the mount `/etc/x/policy` -> `<volume dir>/policy.yaml`. */
export function translatePath(value: string, mounts: readonly Mount[]): string {
  const byDepth = [...mounts].sort((a, b) => b.mountPath.length - a.mountPath.length);
  for (const mount of byDepth) {
    const base = mount.mountPath.replace(/\/+$/, '');
    if (value === base) return mount.hostPath;
    if (value.startsWith(`${base}/`)) return join(mount.hostPath, value.slice(base.length + 1));
  }
  return value;
}

export function mountsOf(container: Json, hostPath: (volume: string) => string): Mount[] {
  return records(container.volumeMounts).map((m) => ({ mountPath: String(m.mountPath ?? ''), hostPath: hostPath(String(m.name ?? '')) }));
}

/** The command kubelet would exec: the container's command and args over the image's Entrypoint and Cmd. */
function execCommand(container: Json, image: LocalImage): string[] {
  const command = Array.isArray(container.command) ? container.command.map(String) : undefined;
  const args = Array.isArray(container.args) ? container.args.map(String) : undefined;
  if (command) return [...command, ...(args ?? [])];
  const entry = image.labels[NODE_ENTRY_LABEL];
  if (entry) return ['node', entry, ...(args ?? image.cmd)];
  return [...image.entrypoint, ...(args ?? image.cmd)];
}

/** Past an init wrapper (and its `--`), the words from node on. */
function withoutWrapper(words: readonly string[]): readonly string[] {
  let rest = words;
  while (rest.length > 0 && WRAPPERS[basename(rest[0]!)] !== undefined) {
    rest = rest.slice(1);
    if (rest[0] === '--') rest = rest.slice(1);
  }
  // docker-entrypoint.sh runs `node "$@"` when its first word is an option or a script.
  if (rest.length > 0 && words.length > rest.length && basename(words[0]!) === 'docker-entrypoint.sh' && (rest[0]!.startsWith('-') || /\.[cm]?js$/.test(rest[0]!))) return ['node', ...rest];
  return rest;
}

/** Index of the script among node's words (after its options), or -1. */
function scriptIndex(nodeArgs: readonly string[]): number {
  for (let i = 0; i < nodeArgs.length; i++) {
    const word = nodeArgs[i]!;
    if (!word.startsWith('-')) return i;
    if (OPTIONS_WITH_VALUE.has(word)) i++;
  }
  return -1;
}

/**
 * The process to run: node's argv (options, the script as a host path, its args) and its working
 * directory, or why this image's command is not a Node entry point.
 */
export function commandLine(container: Json, image: LocalImage): { argv: string[]; script: number; cwd: string } | { error: string } {
  const words = execCommand(container, image);
  const fromNode = withoutWrapper(words);
  if (fromNode.length === 0 || !['node', 'nodejs'].includes(basename(fromNode[0]!))) {
    return { error: `the local kubelet runs Node entry points only: ${JSON.stringify(words)} does not start node (set the image's ENTRYPOINT/CMD to ["node", "SCRIPT"] or its label ${NODE_ENTRY_LABEL}=SCRIPT)` };
  }
  const nodeArgs = fromNode.slice(1);
  const script = scriptIndex(nodeArgs);
  if (script < 0) return { error: `${JSON.stringify(words)} names no script for node to run` };
  const inImage = posix.resolve(image.workingDir, nodeArgs[script]!);
  const base = image.workingDir.replace(/\/+$/, '');
  if (base !== '' && inImage !== base && !inImage.startsWith(`${base}/`)) {
    return { error: `the script ${inImage} is outside the image's WORKDIR ${image.workingDir}, the only part of the image the local kubelet copies out` };
  }
  const argv = [...nodeArgs];
  argv[script] = join(image.root, inImage.slice(base.length));
  return { argv, script, cwd: image.root };
}
