import type { Config } from '../config/types.js';
import type { KubeApi } from '../kube/client.js';
import type { TrustedCaReader } from '../tls/ca-confirmation.js';
import type { SecretApi } from '../tls/secret-api.js';

export interface ClusterConnection {
  api: KubeApi;
  /** The Secret API the certificate code persists generated material with (own namespace). */
  secretApi: SecretApi;
  /** Which CAs the live webhook configurations trust (read back from the API). */
  trustedCas: TrustedCaReader;
  /** Ends the kept-alive API connections; for after the last API call of the process. */
  close(): void;
}

/**
 * The cluster side, loaded only when a cluster is configured: @kubernetes/client-node alone takes
 * about half a second to load, which a local start (and its first TLS byte) should not pay.
 */
export async function connectToCluster(config: Config): Promise<ClusterConnection | undefined> {
  if (!config.clusterConfigured) return undefined;
  const [{ createKubeApi, loadKubeConfig }, { kubeSecretApi }, { configurationApis }, { liveTrustedCas }] = await Promise.all([
    import('../kube/client.js'),
    import('./kube-secret-api.js'),
    import('../registration/configuration-api.js'),
    import('../registration/trusted-cas.js'),
  ]);
  const kubeConfig = loadKubeConfig(config);
  const api = createKubeApi(kubeConfig);
  return {
    api,
    secretApi: kubeSecretApi(api, config.namespace),
    trustedCas: liveTrustedCas(configurationApis(api), config.configName),
    close: () => kubeConfig.close(),
  };
}
