import type { Logger } from 'pino';
import { formatApiFailure, isForbidden, isRetryable } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import type { OwnerClusterRole } from './owner.js';
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
 * What a leader needs before its first write: the API server's version (matchConditions need
 * 1.28, native entries a served API) and the owner ClusterRole's uid (a write without it would
 * strip the ownerReference). Every replica reads the version at start, before anything is written
 * (check: the policy is compiled for it, and a policy it cannot run fails every replica's start,
 * not only the leader's); the owner it reads once then, only a refusal counting, so an owner read
 * that fails or hangs holds no follower up. A leader reads what it lacks at the start of its
 * first term, retried with capped backoff for as long as the term lasts; a refusal (403) fails
 * the process's first registration (an RBAC mistake is reported at install) and is retried,
 * logged as an error, in a later term (the term must not die silently).
 */
export class LeaderReads {
  readonly #options: LeaderReadsOptions;
  #version: ServerVersion | undefined;
  #ownerRead = false;

  constructor(options: LeaderReadsOptions) {
    this.#options = options;
  }

  /**
   * The start's check, by every replica before its first write: the version, waited for (the
   * policy is compiled for it, which may refuse the start), and one read of the owner, of which
   * only a refusal counts (a follower is not held up by it; the leader reads it again).
   */
  async check(signal: AbortSignal): Promise<void> {
    await this.#readVersion(signal, true);
    const owner = this.#options.owner;
    if (!owner || this.#ownerRead) return;
    try {
      await owner.read(signal);
      this.#ownerRead = true;
    } catch (error) {
      if (isForbidden(error) || signal.aborted) throw error;
      // No answer: read again, retried, by this process once it leads, before its first write.
      this.#options.logger.warn({ clusterRole: owner.name, error: formatApiFailure(error) }, 'reading the owner ClusterRole failed; retrying');
    }
  }

  /** Resolves once both are known; rejects when `signal` aborts, or on a refusal when `refusalFails`. */
  async ensure(signal: AbortSignal, refusalFails: boolean): Promise<void> {
    const { owner } = this.#options;
    // Both reads at once: a leader's first registration waits for one round trip instead of two.
    const ownerRead =
      owner && !this.#ownerRead ? this.#retry('reading the owner ClusterRole failed; retrying', { clusterRole: owner.name }, () => owner.read(signal), signal, refusalFails) : undefined;
    // Handled here so that, when the version read fails first, the owner read ending badly too is not an unhandled rejection.
    ownerRead?.catch(() => undefined);
    await this.#readVersion(signal, refusalFails);
    if (ownerRead) {
      await ownerRead;
      this.#ownerRead = true;
    }
  }

  async #readVersion(signal: AbortSignal, refusalFails: boolean): Promise<void> {
    if (this.#version !== undefined) return;
    const { api, logger } = this.#options;
    this.#version = await this.#retry('reading the API server version failed; retrying', {}, () => fetchServerVersion(api, signal), signal, refusalFails);
    logger.info({ version: this.#version.gitVersion }, 'API server version');
    this.#options.onVersion(this.#version, refusalFails);
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
