/** The server module's public surface: what the lifecycle and the library API import. */
export { createWebhookServer, type CloseResult, type WebhookServer, type WebhookServerOptions } from './webhook-server.js';
export { createHealthServer, type HealthServer, type HealthServerOptions, type Readiness } from './health-server.js';
export { admissionMetrics, type AdmissionMetrics, type CountedDecision } from './metrics.js';
export { SERVER_CIPHERS, type ServerTlsMaterial, type ServingCertificate } from './tls-options.js';
export { ADMISSION_V1, ADMISSION_V1BETA1, decodeReview, InvalidReviewError, type DecodedReview, type ReviewApiVersion } from './review-decode.js';
export { encodeReview, type ReviewDecision, type Verdict } from './review-encode.js';
export { BODY_LIMIT_BYTES } from './request-errors.js';
export { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './connection-limits.js';
