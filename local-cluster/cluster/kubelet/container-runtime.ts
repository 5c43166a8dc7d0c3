/**
 * The "container runtime": the one image the local cluster can run, kube-admission-server (any
 * registry or tag), is the compiled server run by this Node, as the image's
 * `ENTRYPOINT ["node", "dist/src/main.js"]` with WORKDIR /app (the repository root here).
 * The container's args follow; absolute paths in args and env that fall under a volumeMount are
 * translated to the volume's directory, since there is no mount namespace.
 */
import { join } from 'node:path';
import { records } from '../workload-objects.js';

type Json = Record<string, unknown>;

export const RUNNABLE_IMAGE = 'kube-admission-server';
const ENTRYPOINT = ['node', 'dist/src/main.js'];

/** The image's repository name without registry, tag or digest. */
export function imageName(image: string): string {
  const withoutDigest = image.split('@')[0] ?? '';
  const last = withoutDigest.split('/').at(-1) ?? '';
  return last.split(':')[0] ?? '';
}

export const isRunnable = (image: string): boolean => imageName(image) === RUNNABLE_IMAGE;

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

/** The process to run: argv after the Node binary, or why it cannot run here. */
export function commandLine(container: Json, mainJs: string): { argv: string[] } | { error: string } {
  const command = Array.isArray(container.command) ? container.command.map(String) : undefined;
  if (command && command.join(' ') !== ENTRYPOINT.join(' ')) {
    return { error: `the local kubelet runs only the image's entrypoint (${ENTRYPOINT.join(' ')}), not command ${JSON.stringify(command)}` };
  }
  const args = Array.isArray(container.args) ? container.args.map(String) : [];
  return { argv: [mainJs, ...args] };
}
