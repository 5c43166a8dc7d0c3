import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
  VersionApi,
} from '@kubernetes/client-node';
import type { Config } from '../config/types.js';
import { SharedAgentKubeConfig } from './shared-agents.js';

/** The typed API groups the server uses, from one KubeConfig. */
export interface KubeApi {
  kubeConfig: KubeConfig;
  admission: AdmissionregistrationV1Api;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
  apps: AppsV1Api;
  authorization: AuthorizationV1Api;
  discovery: DiscoveryV1Api;
  rbac: RbacAuthorizationV1Api;
  version: VersionApi;
}

/**
 * Loads the kubeconfig the configuration names, or the in-cluster service account. Only an
 * explicit kubeconfig or a pod counts as a cluster: a developer's ~/.kube/config must not make a
 * local `npm start` register webhooks in whatever cluster it happens to point at. Every call made
 * through it shares kept-alive connections (SharedAgentKubeConfig); `close()` ends them.
 */
export function loadKubeConfig(config: Pick<Config, 'kubeconfig' | 'inCluster'>): SharedAgentKubeConfig {
  const kubeConfig = new SharedAgentKubeConfig();
  if (config.kubeconfig !== undefined) kubeConfig.loadFromFile(config.kubeconfig);
  else if (config.inCluster) kubeConfig.loadFromCluster();
  else throw new Error('no cluster configured: set --kubeconfig (or KUBECONFIG), or run in a pod');
  return kubeConfig;
}

export function createKubeApi(kubeConfig: KubeConfig): KubeApi {
  return {
    kubeConfig,
    admission: kubeConfig.makeApiClient(AdmissionregistrationV1Api),
    core: kubeConfig.makeApiClient(CoreV1Api),
    coordination: kubeConfig.makeApiClient(CoordinationV1Api),
    apps: kubeConfig.makeApiClient(AppsV1Api),
    authorization: kubeConfig.makeApiClient(AuthorizationV1Api),
    discovery: kubeConfig.makeApiClient(DiscoveryV1Api),
    rbac: kubeConfig.makeApiClient(RbacAuthorizationV1Api),
    version: kubeConfig.makeApiClient(VersionApi),
  };
}
