import type { Logger } from 'pino';
import { retryWithBackoff } from '../util/backoff.js';
import { formatApiFailure, isNotFound, isRetryable } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { callApi } from '../kube/request-deadline.js';

/** The owner the configurations should name: the ClusterRole's uid, undefined while it does not exist. */
export interface OwnerClusterRoleRef {
  name: string;
  uid: string | undefined;
}

/**
 * The ClusterRole that owns the configurations, so deleting the install garbage-collects them. Its
 * uid is read again at every reconcile pass: a GitOps tool that force-replaces the ClusterRole
 * (delete, then create: a new uid) would otherwise leave configurations that name the old uid,
 * which the garbage collector deletes and the reconciler re-creates, over and over. While the
 * ClusterRole does not exist the configurations carry no ownerReference at all, for the same reason.
 */
export class OwnerClusterRole {
  readonly #api: KubeApi;
  readonly #logger: Logger;
  readonly name: string;
  #uid: string | undefined;
  /** The uid of the last read that found it, kept while it is missing. */
  #lastSeenUid: string | undefined;
  #seen = false;

  constructor(api: KubeApi, name: string, logger: Logger) {
    this.#api = api;
    this.name = name;
    this.#logger = logger;
  }

  get reference(): OwnerClusterRoleRef {
    return { name: this.name, uid: this.#uid };
  }

  /** Like `reference`, but while the ClusterRole is missing it names the uid it had when last seen. */
  get lastSeenReference(): OwnerClusterRoleRef {
    return { name: this.name, uid: this.#lastSeenUid };
  }

  /**
   * At start: a passing API failure (a restart, a 5xx, no answer) is retried like a registration
   * is (about 10 s of backoff) instead of failing the start; a 404 is an answer (registered
   * without an ownerReference, with a warning); anything else (403) fails the start.
   */
  async readAtStart(signal: AbortSignal): Promise<OwnerClusterRoleRef> {
    const uid = await retryWithBackoff(() => this.#readUid(signal), {
      initialMs: 100,
      maxMs: 2000,
      maxAttempts: 8,
      signal,
      retryable: isRetryable,
      onRetry: (error, attempt, delayMs) =>
        this.#logger.warn({ clusterRole: this.name, attempt: attempt + 1, delayMs, error: formatApiFailure(error) }, 'reading the owner ClusterRole failed; retrying'),
    });
    this.#update(uid);
    return this.reference;
  }

  /** One read; rejects on a failure other than 404 (which is an answer: no owner). */
  async read(signal: AbortSignal): Promise<OwnerClusterRoleRef> {
    this.#update(await this.#readUid(signal));
    return this.reference;
  }

  /** At every reconcile pass: one read. A failure other than 404 keeps the uid last seen. */
  async refresh(signal: AbortSignal): Promise<OwnerClusterRoleRef> {
    try {
      this.#update(await this.#readUid(signal));
    } catch (error) {
      if (signal.aborted) throw error;
      this.#logger.warn({ clusterRole: this.name, error: formatApiFailure(error) }, 'reading the owner ClusterRole failed; keeping the ownerReference last seen');
    }
    return this.reference;
  }

  async #readUid(signal: AbortSignal): Promise<string | undefined> {
    try {
      const role = await callApi(signal, (o) => this.#api.rbac.readClusterRole({ name: this.name }, o));
      const uid = role.metadata?.uid;
      if (!uid) throw new Error(`ClusterRole ${this.name} has no uid`);
      return uid;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  #update(uid: string | undefined): void {
    const [seen, previous] = [this.#seen, this.#uid];
    this.#seen = true;
    this.#uid = uid;
    this.#lastSeenUid = uid ?? this.#lastSeenUid;
    if (uid === undefined) {
      this.#logger.warn(
        { clusterRole: this.name, previousUid: previous },
        'the owner ClusterRole does not exist: the configurations carry no ownerReference until it is back (garbage collection on uninstall needs it)',
      );
    } else if (seen && previous !== uid) {
      this.#logger.warn({ clusterRole: this.name, previousUid: previous, uid }, 'the owner ClusterRole is back or was replaced: the ownerReference follows its uid');
    }
  }
}
