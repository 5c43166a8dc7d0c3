/**
 * The kubelet's status manager, as far as a Pod's worker needs it: status writes go out one after
 * another, and a write that did not land (every kube-apiserver down, a 5xx) is made again on the
 * status manager's sync period until one lands, as kubelet's syncBatch does for every Pod whose
 * status the API does not hold yet (pkg/kubelet/status/status_manager.go, syncPeriod 10 s).
 * Without that, a readiness change made during an API outage would never reach the Pod object, and
 * a Deployment would wait for that Pod's availability for ever.
 */

/** kubelet's status manager resyncs every 10 s. */
export const STATUS_SYNC_PERIOD_MS = 10_000;

/** `landed`: the API holds it (or there is nothing to hold: the Pod is gone); `failed`: try again later. */
export type StatusWriteOutcome = 'landed' | 'failed';

export class StatusSync {
  #chain: Promise<void> = Promise.resolve();
  #retry: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    private readonly write: () => Promise<StatusWriteOutcome>,
    private readonly periodMs = STATUS_SYNC_PERIOD_MS,
  ) {}

  /** Writes the current status after the writes already queued; resolves when this one was tried. */
  sync(): Promise<void> {
    this.#chain = this.#chain.then(async () => {
      if (this.#stopped) return;
      if ((await this.write()) === 'failed') this.retryLater();
    });
    return this.#chain;
  }

  /** Resolves once every queued write was tried. */
  get settled(): Promise<void> {
    return this.#chain;
  }

  /** The Pod is gone: no more writes. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
  }

  private retryLater(): void {
    if (this.#retry || this.#stopped) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.sync();
    }, this.periodMs);
    this.#retry.unref();
  }
}
