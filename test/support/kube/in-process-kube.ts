/** The API test double with the server's own typed client (src/kube/client.ts) pointed at it, for in-process tests. */
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeApi, type KubeApi } from '../../../src/kube/client.js';
import type { Cleanups } from './cluster-harness.js';
import { startFakeApiServer, type FakeApiServer, type FakeApiServerOptions } from '../../../local-cluster/fake-apiserver/index.js';
import { renderKubeconfig, type KubeconfigOptions, type KubeconfigTarget } from '../../../local-cluster/util/kubeconfig.js';
import { seedReadyService } from './ready-service.js';

export interface InProcessKube {
  api: FakeApiServer;
  kube: KubeApi;
}

/** A client-node KubeConfig pointing at the double. */
export function loadKubeConfig(target: KubeconfigTarget, options: KubeconfigOptions = {}): KubeConfig {
  const config = new KubeConfig();
  config.loadFromString(renderKubeconfig(target, options));
  return config;
}

/**
 * Starts the double (closed at teardown) and a KubeApi on it whose default namespace is `namespace`,
 * where the Service `kube-admission-server` has a ready endpoint.
 */
export async function startInProcessKube(t: Cleanups, namespace: string, options: FakeApiServerOptions = {}): Promise<InProcessKube> {
  const api = await startFakeApiServer({ ...options, namespaces: [namespace, ...(options.namespaces ?? [])] });
  seedReadyService(api.store, namespace, 'kube-admission-server');
  t.teardown(() => api.close());
  return { api, kube: createKubeApi(loadKubeConfig(api, { namespace })) };
}
