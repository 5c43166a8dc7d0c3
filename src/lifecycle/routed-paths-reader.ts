import type { Config } from '../config/types.js';
import type { KubeApi } from '../kube/client.js';
import type { RoutedPathsReader } from './served-handlers.js';

/** Reads which of this install's webhook paths the live configurations route to (loaded only with a cluster). */
export async function routedPathsReader(config: Config, api: KubeApi): Promise<RoutedPathsReader> {
  const [{ configurationApis }, { routedServicePaths }] = await Promise.all([import('../kube/configuration-api.js'), import('../kube/routed-paths.js')]);
  const apis = configurationApis(api);
  return (signal) => routedServicePaths(apis, config.configName, { name: config.serviceName, namespace: config.namespace }, signal);
}
