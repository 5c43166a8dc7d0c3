/**
 * How long a change of the webhook configurations may take to reach every kube-apiserver.
 *
 * Each kube-apiserver of a control plane calls webhooks as its own informer cache of the
 * configurations says (local-cluster/CONTRACT.md 6): milliseconds behind the API usually, seconds
 * under load or after a watch restart, and a read-back from one kube-apiserver proves nothing about
 * the others. So every step this server takes because "the live configurations now say X" waits
 * this long first: closing the listener after the teardown deleted them (within the shutdown
 * deadline), serving a certificate under a CA they have just begun to trust, and turning Ready on
 * a chain they have just begun to trust. Retiring a handler they no longer route to waits the
 * entry overlap instead (--entry-overlap, minutes): a lag past this grace must not turn an
 * enforcing rule's calls into "not served".
 * docs/operations.md names it; it is not a flag (every step above is harmless to lengthen except
 * the shutdown, which the deadline bounds anyway).
 */
export const PROPAGATION_GRACE_MS = 3000;
