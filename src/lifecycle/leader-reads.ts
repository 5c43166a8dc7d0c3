import type { Logger } from 'pino';
import { formatApiFailure, isRetryable } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import type { OwnerClusterRole } from '../kube/owner.js';
import { fetchServerVersion, type ServerVersion } from '../kube/server-version.js';
import { retryWithBackoff } from '../util/backoff.js';

/** Capped backoff for the leader's reads: quick after a blip, every 5 s through a long outage. */
const BACKOFF = { initialMs: 200, maxMs: 5000 } as const;

export interface LeaderReadsOptions {
  api: KubeApi;
  owner: OwnerClusterRole | undefined;
  /**
   * The API server's version, once read (what the configurations may use). `starting`: read for
   * the process's first registration, where throwing fails the start; later it must not throw.
   */
  onVersion: (version: ServerVersion, starting: boolean) => void;
  logger: Logger;
}

/**
 * What only a leader needs before its first write: the API server's version (matchConditions
 * need 1.28) and the owner ClusterRole's uid (a write without it would strip the ownerReference).
 * Followers never read them, so an API outage while a pod starts (an apiserver restart during a
 * control-plane upgrade) costs a follower nothing. Each is read once per process, at the start of
 * the first leadership term, and retried with capped backoff for as long as the term lasts; a
 * refusal (403) fails the process's first registration (an RBAC mistake is reported at install)
 * and is retried, logged as an error, in a later term (the term must not die silently).
 */
export class LeaderReads {
  readonly #options: LeaderReadsOptions;
  #version: ServerVersion | undefined;
  #ownerRead = false;

  constructor(options: LeaderReadsOptions) {
    this.#options = options;
  }

  /** Resolves once both are known; rejects when `signal` aborts, or on a refusal when `refusalFails`. */
  async ensure(signal: AbortSignal, refusalFails: boolean): Promise<void> {
    const { api, owner, logger } = this.#options;
    // Both reads at once: a leader's first registration waits for one round trip instead of two.
    const ownerRead =
      owner && !this.#ownerRead ? this.#retry('reading the owner ClusterRole failed; retrying', { clusterRole: owner.name }, () => owner.read(signal), signal, refusalFails) : undefined;
    // Handled here so that, when the version read fails first, the owner read ending badly too is not an unhandled rejection.
    ownerRead?.catch(() => undefined);
    if (this.#version === undefined) {
      this.#version = await this.#retry('reading the API server version failed; retrying', {}, () => fetchServerVersion(api, signal), signal, refusalFails);
      logger.info({ version: this.#version.gitVersion }, 'API server version');
      this.#options.onVersion(this.#version, refusalFails);
    }
    if (ownerRead) {
      await ownerRead;
      this.#ownerRead = true;
    }
  }

  #retry<T>(message: string, fields: Record<string, unknown>, read: () => Promise<T>, signal: AbortSignal, refusalFails: boolean): Promise<T> {
    return retryWithBackoff(read, {
      ...BACKOFF,
      maxAttempts: Number.POSITIVE_INFINITY,
      signal,
      retryable: (error) => !refusalFails || isRetryable(error),
      onRetry: (error, attempt, delayMs) => {
        const level = isRetryable(error) ? 'warn' : 'error';
        this.#options.logger[level]({ ...fields, attempt: attempt + 1, delayMs, error: formatApiFailure(error) }, message);
      },
    });
  }
}
