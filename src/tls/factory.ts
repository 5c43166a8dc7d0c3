/** The constructors the lifecycle calls; both serving sources offer the TlsMaterialSource face. */
import type { Logger } from 'pino';
import type { CaConfirmation, TrustedCaReader } from './ca-confirmation.js';
import { FileClientCaSource } from './client-ca-source.js';
import { DirMaterialStore } from './dir-store.js';
import { FileMaterialSource } from './file-source.js';
import { GeneratedMaterialSource } from './generated-source.js';
import type { KeyGenerator } from './keys.js';
import type { MaterialStore } from './material-store.js';
import type { TlsMetrics } from './metrics.js';
import { ReadOnlyMaterialStore } from './read-only-store.js';
import { servingSans, serviceHostName } from './sans.js';
import { generatedSecretName, type SecretApi } from './secret-api.js';
import { SecretMaterialStore } from './secret-store.js';

const MINUTE_MS = 60 * 1000;

/** The defaults: CA 5 years rolled 90 days before expiry, leaf 1 year renewed 30 days before. */
export const DEFAULT_CERTIFICATE_LIFETIMES = {
  caValidityDays: 5 * 365,
  leafValidityDays: 365,
  leafRenewBeforeDays: 30,
  caRenewBeforeDays: 90,
} as const;

export interface GeneratedMaterialConfig {
  serviceName: string;
  namespace: string;
  extraSans: readonly string[];
  /** No cluster: persist in certDir and add localhost / 127.0.0.1 to the SANs. */
  local: boolean;
  certDir: string;
  /** Without a cluster, whether certDir may be written (default true); false: it is only read, new material stays in memory. */
  certDirWritable?: boolean;
  /** Required unless local: the Secret `<service>-certs` in `namespace` goes through it. */
  secretApi?: SecretApi;
  caValidityDays: number;
  leafValidityDays: number;
  leafRenewBeforeDays: number;
  caRenewBeforeDays: number;
  /**
   * Reads which CAs the live webhook configurations trust: set where this server registers, so a
   * leaf moves to a new CA only once they do. Without it (and not local): after caPropagationMs.
   */
  trustedCas?: TrustedCaReader;
  /** Poll of `trustedCas` while a new CA waits to be trusted. Default 5 s. */
  caConfirmPollMs?: number;
  /** Without `trustedCas`: how long a new CA sits in the published bundle before leaves signed by it are served. Default 1 h. */
  caPropagationMs?: number;
  /** Renewal check interval. Default 10 min. */
  checkIntervalMs?: number;
  /** Bound on one renewal check. Default 60 s. */
  checkTimeoutMs?: number;
  now?: () => Date;
  /** Default: RSA-2048 from node:crypto. */
  generateKey?: KeyGenerator;
  logger: Logger;
  metrics: TlsMetrics;
}

export function createGeneratedMaterial(config: GeneratedMaterialConfig): GeneratedMaterialSource {
  return new GeneratedMaterialSource({
    store: materialStore(config),
    policy: {
      sans: servingSans(config),
      leafCommonName: serviceHostName(config.serviceName, config.namespace),
      caCommonName: `${config.serviceName}.${config.namespace} webhook CA`,
      caValidityDays: config.caValidityDays,
      leafValidityDays: config.leafValidityDays,
      leafRenewBeforeDays: config.leafRenewBeforeDays,
      caRenewBeforeDays: config.caRenewBeforeDays,
      caPropagationMs: config.caPropagationMs ?? 60 * MINUTE_MS,
    },
    confirmation: caConfirmation(config),
    checkIntervalMs: config.checkIntervalMs ?? 10 * MINUTE_MS,
    checkTimeoutMs: config.checkTimeoutMs ?? MINUTE_MS,
    now: config.now ?? (() => new Date()),
    generateKey: config.generateKey,
    logger: config.logger,
    metrics: config.metrics,
  });
}

function caConfirmation(config: GeneratedMaterialConfig): CaConfirmation {
  if (config.local) return { kind: 'immediate' };
  if (config.trustedCas) return { kind: 'live', trustedCas: config.trustedCas, pollMs: config.caConfirmPollMs ?? 5_000 };
  return { kind: 'after-propagation' };
}

function materialStore(config: GeneratedMaterialConfig): MaterialStore {
  if (config.local) {
    const dir = new DirMaterialStore(config.certDir);
    return config.certDirWritable === false ? new ReadOnlyMaterialStore(dir) : dir;
  }
  if (!config.secretApi) throw new Error('generate mode in a cluster needs a SecretApi to persist the material');
  return new SecretMaterialStore(config.secretApi, generatedSecretName(config.serviceName), config.namespace);
}

export interface FileMaterialConfig {
  certDir: string;
  serviceName: string;
  namespace: string;
  pollIntervalMs: number;
  now?: () => Date;
  logger: Logger;
  metrics: TlsMetrics;
  settleMs?: number;
  useFsEvents?: boolean;
}

export function createFileMaterial(config: FileMaterialConfig): FileMaterialSource {
  return new FileMaterialSource({ ...config, now: config.now ?? (() => new Date()) });
}

export interface ClientCaConfig {
  file: string;
  pollIntervalMs: number;
  now?: () => Date;
  logger: Logger;
  metrics: TlsMetrics;
  settleMs?: number;
  useFsEvents?: boolean;
}

export function createClientCaSource(config: ClientCaConfig): FileClientCaSource {
  return new FileClientCaSource({ ...config, now: config.now ?? (() => new Date()) });
}
