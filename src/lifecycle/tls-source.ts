import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { createClientCaSource, createFileMaterial, createGeneratedMaterial } from '../tls/factory.js';
import type { TlsMetrics } from '../tls/metrics.js';
import type { ClientCaSource, TlsMaterialSource } from '../tls/types.js';
import type { ClusterConnection } from './cluster-connection.js';

/**
 * files: the mounted Secret in --cert-dir. generate: persisted in a Secret when a cluster is
 * configured (all replicas share one CA), in --cert-dir otherwise; where this deployment
 * registers, a new CA signs the served leaf only once the live configurations trust it.
 */
export function createTlsSource(config: Config, cluster: ClusterConnection | undefined, logger: Logger, metrics: TlsMetrics): TlsMaterialSource {
  const tlsLogger = logger.child({ component: 'tls' });
  if (config.tlsMode === 'files') {
    return createFileMaterial({
      certDir: config.certDir,
      serviceName: config.serviceName,
      namespace: config.namespace,
      pollIntervalMs: config.watchPollIntervalMs,
      logger: tlsLogger,
      metrics,
    });
  }
  return createGeneratedMaterial({
    serviceName: config.serviceName,
    namespace: config.namespace,
    extraSans: config.extraSans,
    local: cluster === undefined,
    certDir: config.certDir,
    certDirWritable: config.certDirWritable,
    ...(cluster ? { secretApi: cluster.secretApi } : {}),
    ...(cluster && config.register ? { trustedCas: cluster.trustedCas } : {}),
    caValidityDays: config.caValidityDays,
    leafValidityDays: config.leafValidityDays,
    leafRenewBeforeDays: config.leafRenewBeforeDays,
    caRenewBeforeDays: config.caRenewBeforeDays,
    logger: tlsLogger,
    metrics,
  });
}

export function createClientCa(config: Config, logger: Logger, metrics: TlsMetrics): ClientCaSource | undefined {
  if (config.clientCaFile === undefined) return undefined;
  return createClientCaSource({
    file: config.clientCaFile,
    pollIntervalMs: config.watchPollIntervalMs,
    logger: logger.child({ component: 'client-ca' }),
    metrics,
  });
}
