/**
 * Kubeconfigs for clients of the fake apiserver: a child-process server, kubectl, or
 * @kubernetes/client-node (see in-process-kube.ts; not imported here, as the double imports this
 * file and client-node takes seconds to load under tap's hooks).
 */
import { writeFile, chmod } from 'node:fs/promises';
import { stringify } from 'yaml';

export interface KubeconfigTarget {
  url: string;
  caPem: string;
  token: string;
}

export interface KubeconfigOptions {
  namespace?: string;
  /** Cluster, user and context name; default `fake-apiserver`. */
  name?: string;
}

export function renderKubeconfig(target: KubeconfigTarget, options: KubeconfigOptions = {}): string {
  const name = options.name ?? 'fake-apiserver';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name,
        cluster: { server: target.url, 'certificate-authority-data': Buffer.from(target.caPem).toString('base64') },
      },
    ],
    users: [{ name, user: { token: target.token } }],
    contexts: [
      { name, context: { cluster: name, user: name, ...(options.namespace ? { namespace: options.namespace } : {}) } },
    ],
    'current-context': name,
  });
}

/** Writes the kubeconfig with mode 0600: it holds the token. */
export async function writeKubeconfig(path: string, target: KubeconfigTarget, options: KubeconfigOptions = {}): Promise<void> {
  await writeFile(path, renderKubeconfig(target, options), { mode: 0o600 });
  await chmod(path, 0o600);
}
