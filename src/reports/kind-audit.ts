import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeObject } from '../admission/types.js';
import { describeApiFailure } from '../kube/api-errors.js';
import type { DiscoveredResource } from '../kube/discovery.js';
import { listAndWatch } from '../kube/list-watch.js';
import { listPages } from '../kube/paged-list.js';
import { deferred } from '../util/deferred.js';
import type { AuditQueue } from './audit-queue.js';
import type { KeptKind, KeptObjects } from './kept-objects.js';

/** What one kind's list and watch needs of the term. */
export interface KindAuditInputs {
  kubeConfig: KubeConfig;
  queue: AuditQueue;
  kept: KeptObjects;
  /** Judges one object (evaluated unless its resourceVersion is kept already and `force` is false). */
  judge: (kind: KindAudit, object: KubeObject, force: boolean) => Promise<void>;
  /** Told which namespaces lost objects when a list showed them gone. */
  swept: (namespaces: ReadonlySet<string>) => void;
  pageSize: number;
  timeoutMs: number;
  logger: Logger;
}

/**
 * One kind the reported rules match: listed (paged, one page in the queue at a time) and then
 * watched, every object judged through the audit's queue; what a new list no longer shows is
 * forgotten. `listed` resolves once the first list has been judged (or the API refused the
 * list: the audit's first scan then completes without this kind, said in the log).
 */
export class KindAudit {
  readonly target: DiscoveredResource;
  readonly kind: KeptKind;
  readonly #inputs: KindAuditInputs;
  readonly #stop = new AbortController();
  readonly #listed = deferred<void>();
  #running: Promise<void> | undefined;
  #listClock = 0;
  #failures = 0;

  constructor(target: DiscoveredResource, kind: KeptKind, inputs: KindAuditInputs) {
    this.target = target;
    this.kind = kind;
    this.#inputs = inputs;
  }

  /** The first list is judged (or refused). */
  get listed(): Promise<void> {
    return this.#listed.promise;
  }

  start(signal: AbortSignal): void {
    const stop = AbortSignal.any([signal, this.#stop.signal]);
    const { queue, kept } = this.#inputs;
    const logger = this.#inputs.logger;
    this.#running = listAndWatch({
      kubeConfig: this.#inputs.kubeConfig,
      target: this.target,
      pageSize: this.#inputs.pageSize,
      timeoutMs: this.#inputs.timeoutMs,
      signal: stop,
      logger,
      handlers: {
        listStarted: () => (this.#listClock = kept.clock),
        listed: async (items) => {
          for (const object of items) this.#put(object, false);
          await queue.until(this.#inputs.pageSize, stop);
        },
        listDone: async () => {
          await queue.until(0, stop);
          this.#sweep();
          this.#failures = 0;
          this.#listed.resolve();
        },
        event: (type, object) => {
          const uid = object.metadata?.uid;
          if (!uid) return;
          if (type === 'DELETED') queue.put(uid, { type: 'forget', run: () => void kept.delete(object.metadata?.namespace ?? '', uid) });
          else this.#put(object, false);
        },
        failed: (error) => this.#failed(error),
      },
    });
  }

  /**
   * A refusal (401, 403), a kind gone (404) or a third failure in a row lets the first scan
   * complete without this kind, said once; the list is tried again all the same, and its
   * objects are judged once it succeeds.
   */
  #failed(error: unknown): void {
    const { code, message } = describeApiFailure(error);
    this.#failures++;
    const givingUp = code === 401 || code === 403 || code === 404 || this.#failures === 3;
    if (!givingUp || this.#failures > 3) return;
    const hint = code === 401 || code === 403 ? ' (the ServiceAccount needs list and watch on it: render --reports-rbac prints the rules)' : '';
    this.#inputs.logger.error({ resource: this.target.path, code, error: message }, `background audit: this kind cannot be listed${hint}; its objects are judged once it can`);
    this.#failures = 4;
    this.#listed.resolve();
  }

  /** Lists the kind in one namespace again and judges every object anew (its Namespace changed). */
  async relistNamespace(namespace: string, signal: AbortSignal): Promise<void> {
    if (!this.target.namespaced) return;
    const prefix = this.target.group === '' ? `/api/${this.target.version}` : `/apis/${this.target.group}/${this.target.version}`;
    const target = { path: `${prefix}/namespaces/${namespace}/${this.target.resource}`, apiVersion: this.target.apiVersion, kind: this.target.kind };
    const stop = AbortSignal.any([signal, this.#stop.signal]);
    for await (const page of listPages(this.#inputs.kubeConfig, target, { pageSize: this.#inputs.pageSize, timeoutMs: this.#inputs.timeoutMs, signal: stop })) {
      for (const object of page.items as KubeObject[]) this.#put(object, true);
      await this.#inputs.queue.until(this.#inputs.pageSize, stop);
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort(new Error('kind no longer audited'));
    await this.#running;
  }

  #put(object: KubeObject, force: boolean): void {
    const uid = object.metadata?.uid;
    if (!uid) return;
    const item = { apiVersion: this.target.apiVersion, kind: this.target.kind, ...object };
    this.#inputs.queue.put(uid, { type: 'judge', object: item, force, run: (queued, forced) => this.#inputs.judge(this, queued, forced) });
  }

  /** What the list just judged did not show is gone: its objects are forgotten. */
  #sweep(): void {
    const since = this.#listClock;
    const swept = this.#inputs.kept.deleteWhere((object) => object.kind.key === this.kind.key && object.seen <= since);
    if (swept.size > 0) this.#inputs.swept(swept);
  }
}
