import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { stringify } from 'yaml';
import type { Config } from '../config/types.js';
import { desiredConfigurations } from '../kube/desired-configurations.js';
import type { Webhook } from '../policy/types.js';
import { createTlsMetrics } from '../tls/metrics.js';
import { connectToCluster } from './cluster-connection.js';
import { loadPolicyOrThrow } from './policy-reloader.js';
import { createTlsSource } from './tls-source.js';

/**
 * The two configurations this server would register, with caBundle, as one YAML stream: for
 * review and GitOps. Loads (or generates and persists) the TLS material the server would use.
 */
export async function renderConfigurations(config: Config, logger: Logger, signal: AbortSignal, customWebhooks: readonly Webhook[] = []): Promise<string> {
  const { policy, webhooks } = await loadPolicyOrThrow(config.policyFile, config.namespace);
  const cluster = await connectToCluster(config);
  const tls = createTlsSource(config, cluster, logger, createTlsMetrics(new Registry()));
  const material = await tls.load(signal);
  await tls.stop();
  const owner =
    cluster && config.ownerClusterRole
      ? await new (await import('../kube/owner.js')).OwnerClusterRole(cluster.api, config.ownerClusterRole, logger).readAtStart(signal)
      : undefined;
  const desired = desiredConfigurations({
    configName: config.configName,
    serviceName: config.serviceName,
    namespace: config.namespace,
    caBundlePem: material.caBundlePem,
    webhooks: [...webhooks, ...customWebhooks],
    excludedNamespaces: policy.excludedNamespaces,
    // A ClusterRole that does not exist (warned about) is left out rather than rendered as an empty list.
    ...(owner?.uid ? { owner } : {}),
  });
  return [desired.mutating, desired.validating].map((object) => stringify(object)).join('---\n');
}
