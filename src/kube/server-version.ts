import type { Logger } from 'pino';
import { retryWithBackoff } from '../util/backoff.js';
import { formatApiFailure, isRetryable } from './api-errors.js';
import type { KubeApi } from './client.js';
import { callApi } from './request-deadline.js';

/** kube-apiserver's version, as /version reports it. */
export interface ServerVersion {
  major: number;
  minor: number;
  /** e.g. v1.27.16-eks-2f008fe, for messages. */
  gitVersion: string;
}

/** The oldest kube-apiserver that honours matchConditions (GA in 1.30, on by default since 1.28). */
export const MATCH_CONDITIONS_SINCE = { major: 1, minor: 28 } as const;

/** Reads "1" and "27+" (what EKS and GKE report) alike; undefined when it is no version. */
export function parseServerVersion(info: { major?: string; minor?: string; gitVersion?: string }): ServerVersion | undefined {
  const major = Number.parseInt(info.major ?? '', 10);
  const minor = Number.parseInt(info.minor ?? '', 10);
  if (!Number.isInteger(major) || !Number.isInteger(minor)) return undefined;
  return { major, minor, gitVersion: info.gitVersion ?? `v${major}.${minor}` };
}

export function atLeast(version: ServerVersion, wanted: { major: number; minor: number }): boolean {
  return version.major > wanted.major || (version.major === wanted.major && version.minor >= wanted.minor);
}

/** One GET /version; rejects when it fails or reports no usable version. */
export async function fetchServerVersion(api: KubeApi, signal: AbortSignal): Promise<ServerVersion> {
  const info = await callApi(signal, (o) => api.version.getCode({}, o));
  const version = parseServerVersion(info);
  if (!version) throw new Error(`the API server reports no usable version (major "${info.major}", minor "${info.minor}")`);
  return version;
}

/** GET /version for a one-shot command (render with a cluster): retried briefly, then a clear error. */
export async function readServerVersion(api: KubeApi, signal: AbortSignal, logger: Logger): Promise<ServerVersion> {
  return await retryWithBackoff(() => fetchServerVersion(api, signal), {
    initialMs: 100,
    maxMs: 2000,
    maxAttempts: 8,
    signal,
    retryable: isRetryable,
    onRetry: (error, attempt, delayMs) => logger.warn({ attempt: attempt + 1, delayMs, error: formatApiFailure(error) }, 'reading the API server version failed; retrying'),
  }).catch((error: unknown) => {
    throw new Error(`reading the API server version (GET /version) failed: ${formatApiFailure(error)}`, { cause: error });
  });
}
