/** The tls part's public face for the lifecycle and kube/. */
export type { ServingMaterial, TlsMaterialSource, TlsMaterialEvents, ClientCaSource, ClientCaEvents } from './types.js';
export {
  createGeneratedMaterial,
  createFileMaterial,
  createClientCaSource,
  DEFAULT_CERTIFICATE_LIFETIMES,
  type GeneratedMaterialConfig,
  type FileMaterialConfig,
  type ClientCaConfig,
} from './factory.js';
export { GeneratedMaterialSource } from './generated-source.js';
export type { TrustedCaReader } from './ca-confirmation.js';
export { FileMaterialSource, SERVING_FILES } from './file-source.js';
export { FileClientCaSource } from './client-ca-source.js';
export { createTlsMetrics, type TlsMetrics, type CertificateRole } from './metrics.js';
export {
  SecretApiError,
  generatedSecretName,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  TLS_SECRET_TYPE,
  type SecretApi,
  type SecretRecord,
  type SecretApiErrorReason,
} from './secret-api.js';
export { serviceHostName, servingSans, type SubjectAltNames } from './sans.js';
export { validateServingMaterial, type ServingValidation } from './validate.js';
export { splitCertificatePem } from './pem.js';
