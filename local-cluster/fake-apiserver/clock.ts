/**
 * The control plane's wall clock: this machine's, off by an offset a test sets (a control-plane
 * node's clock drifts from the nodes the webhooks run on). It stamps what kube-apiserver stamps
 * with its own clock: creationTimestamp, deletionTimestamp, managedFields times, and every
 * answer's Date header.
 */
export class ApiClock {
  #offsetMs = 0;

  /** Epoch milliseconds as the control plane reads them. */
  now(): number {
    return Date.now() + this.#offsetMs;
  }

  /** How far the control plane's clock is ahead of this machine's (negative: behind). */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** Moves the control plane's clock by `ms` (negative: back); this machine's is untouched. */
  shift(ms: number): void {
    this.#offsetMs += ms;
  }

  /** An HTTP Date header of now, as Go's net/http writes it (whole seconds, GMT). */
  httpDate(): string {
    return new Date(this.now()).toUTCString();
  }
}
