/** What tests inspect: every request with performance.now() timestamps and its outcome. */
import type { Fault } from './faults.js';

export interface RequestRecord {
  method: string;
  path: string;
  /** Kubernetes verb (get, list, watch, create, update, patch, delete), or undefined off the API. */
  verb?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  contentType?: string;
  userAgent?: string;
  /** performance.now() when the request arrived. */
  startedAt: number;
  /** performance.now() when the response finished or the connection closed. */
  endedAt?: number;
  /** HTTP status sent; undefined when the connection was reset or the client went away. */
  status?: number;
  fault?: Fault;
  /** The kube-apiserver that served it (`kube-apiserver-N`). */
  apiserver?: string;
  /**
   * The client connection it came on, numbered 1, 2, ... as the double accepts them: requests with
   * the same number shared one kept-alive TLS connection.
   */
  connection?: number;
}

/** `started`: routed (verb, resource and name known), e.g. a watch that stays open; `finished`: answered. */
export type RequestPhase = 'started' | 'finished';

type Waiter = { phase: RequestPhase; predicate: (record: RequestRecord) => boolean; resolve: (record: RequestRecord) => void };

export class RequestLog {
  private readonly records: RequestRecord[] = [];
  private waiters: Waiter[] = [];

  get all(): readonly RequestRecord[] {
    return this.records.map((r) => ({ ...r }));
  }

  begin(record: RequestRecord): RequestRecord {
    this.records.push(record);
    return record;
  }

  /** Called once the request is routed: wakes `started` waiters. */
  routed(record: RequestRecord): void {
    this.wake(record, 'started');
  }

  /** Marks the record done and wakes waiters whose predicate now holds. */
  end(record: RequestRecord, status: number | undefined): void {
    if (record.endedAt !== undefined) return;
    record.endedAt = performance.now();
    record.status = status;
    this.wake(record, 'started');
    this.wake(record, 'finished');
  }

  private wake(record: RequestRecord, phase: RequestPhase): void {
    const ready = this.waiters.filter((w) => w.phase === phase && w.predicate(record));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const waiter of ready) waiter.resolve({ ...record });
  }

  /** Resolves with the first finished request (past or future) that matches; bounded by `timeoutMs`. */
  waitFor(
    predicate: (record: RequestRecord) => boolean,
    options: { timeoutMs: number; signal?: AbortSignal; phase?: RequestPhase },
  ): Promise<RequestRecord> {
    const phase = options.phase ?? 'finished';
    const done = this.records.find((r) => (phase === 'started' ? r.verb !== undefined : r.endedAt !== undefined) && predicate(r));
    if (done) return Promise.resolve({ ...done });
    // Not AbortSignal.any([AbortSignal.timeout(...)]): Node 20 holds the sources of a composite
    // signal weakly, so after a garbage collection the timeout may never fire and the wait hangs.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DOMException(`timed out after ${options.timeoutMs} ms`, 'TimeoutError')), options.timeoutMs);
    const deadline = AbortSignal.any([timeout.signal, ...(options.signal ? [options.signal] : [])]);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        phase,
        predicate,
        resolve: (record) => {
          clearTimeout(timer);
          deadline.removeEventListener('abort', onAbort);
          resolve(record);
        },
      };
      const onAbort = (): void => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`no matching request within ${options.timeoutMs} ms: ${String(deadline.reason)}`));
      };
      this.waiters.push(waiter);
      deadline.addEventListener('abort', onAbort, { once: true });
    });
  }
}
