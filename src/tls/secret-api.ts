/**
 * The few Secret operations generate mode needs. kube/ implements this on @kubernetes/client-node;
 * tests use an in-memory store that behaves like the API server.
 */

export interface SecretRecord {
  name: string;
  /** Set on records read from the API; replace() sends it back for optimistic concurrency. */
  resourceVersion?: string;
  type: string;
  labels: Record<string, string>;
  /** Decoded UTF-8 values. */
  data: Record<string, string>;
}

export interface SecretApi {
  /** The Secret, or undefined when it does not exist. */
  read(name: string, signal: AbortSignal): Promise<SecretRecord | undefined>;
  /** Fails with reason AlreadyExists when the name is taken. */
  create(record: SecretRecord, signal: AbortSignal): Promise<SecretRecord>;
  /** Fails with reason Conflict when resourceVersion is stale, NotFound when it was deleted. */
  replace(record: SecretRecord, signal: AbortSignal): Promise<SecretRecord>;
}

export type SecretApiErrorReason = 'AlreadyExists' | 'Conflict' | 'NotFound' | 'Other';

export class SecretApiError extends Error {
  override readonly name = 'SecretApiError';
  constructor(
    message: string,
    readonly reason: SecretApiErrorReason,
    readonly code: number,
  ) {
    super(message);
  }
}

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'kube-admission-server';
export const TLS_SECRET_TYPE = 'kubernetes.io/tls';

/** The Secret that holds generated material for a service. */
export function generatedSecretName(serviceName: string): string {
  return `${serviceName}-certs`;
}
