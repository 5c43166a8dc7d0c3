import type { ConfigurationApi } from './configuration-api.js';

export interface ServiceRef {
  name: string;
  namespace: string;
}

/**
 * The paths of `service` that the live configurations route to: what kube-apiserver calls on
 * this install right now, whoever registered it (this process as the leader, or another replica).
 * A configuration that does not exist routes nothing.
 */
export async function routedServicePaths(apis: readonly ConfigurationApi[], configName: string, service: ServiceRef, signal: AbortSignal): Promise<Set<string>> {
  const configurations = await Promise.all(apis.map((api) => api.read(configName, signal)));
  const paths = new Set<string>();
  for (const configuration of configurations) {
    for (const webhook of configuration?.webhooks ?? []) {
      const target = webhook.clientConfig?.service;
      if (target?.name === service.name && target.namespace === service.namespace && target.path) paths.add(target.path);
    }
  }
  return paths;
}
