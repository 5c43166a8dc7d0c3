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
  /** Who owns the Secret (the leader sets the install's owners); carried through a replace, never set here. */
  ownerReferences?: readonly SecretOwnerReference[];
}

/** An ownerReference as stored, opaque to the certificate code. */
export interface SecretOwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
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
    /** What the API server asked to wait before the next attempt (Retry-After on a 429 or 5xx). */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }

  /** No answer, throttled, a conflict or a server error: another attempt may succeed. */
  get transient(): boolean {
    return this.code === 0 || this.code === 409 || this.code === 429 || this.code >= 500;
  }
}

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'kube-admission-server';
export const TLS_SECRET_TYPE = 'kubernetes.io/tls';

/** The Secret that holds generated material for a service. */
export function generatedSecretName(serviceName: string): string {
  return `${serviceName}-certs`;
}
