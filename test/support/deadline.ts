/**
 * Every wait in the suite has its own deadline and says what it waited for. The figures are for a
 * busy two-core machine (a CI runner, a laptop building something else): they bound how long a
 * broken test takes to fail, never what a passing one proves, so they are generous.
 */

/** A compiled server process starting up to `ready`: seconds when idle, over 120 s seen at a load average of 25 on two cores. */
export const STARTUP_MS = 240_000;
/** A signalled server process exiting (the shutdown deadline is at most a few seconds in tests). */
export const EXIT_MS = 30_000;
/** Anything else that happens promptly on an idle machine: a log line, a request, a handshake. */
export const EVENT_MS = 30_000;

/**
 * How late a process may exit past its own shutdown bound on a busy machine: signal delivery, the
 * log flush before exit (bounded to 1 s in main.ts) and the process teardown. A test that proves
 * a bound also asserts what shows the code enforced it (the step that timed out, the order).
 * Measured at a load average of 24 on two cores: an immediate exit (a second SIGTERM) took 6 s.
 */
export const EXIT_MARGIN_MS = 8000;

// The waits themselves are the local cluster's (the suite and the cluster bound their waits alike).
export { deadlineSignal, within } from '../../local-cluster/util/waits.js';
