import type { Logger } from 'pino';
import { sleep, withTimeout, isAbortError } from '../util/abort.js';
import type { StepReport } from '../util/step-report.js';

export type { StepOutcome, StepReport } from '../util/step-report.js';

/** The parts the shutdown sequence drives; each is bounded by the signal it is given. */
export interface ShutdownParts {
  /**
   * Step 1: answers end their keep-alive connections, reconcile and lease renewal stopped; /readyz
   * stays 200 while this replica still serves (a terminating endpoint that serves is what
   * kube-proxy falls back to when every endpoint is terminating) and turns 503 at the close.
   */
  beginShutdown(): void;
  /** Step 3: decide and delete the configurations; undefined when there is nothing this process may delete. */
  teardown?: (signal: AbortSignal, budgetMs: number) => Promise<Omit<StepReport, 'ms' | 'step'>>;
  /** Step 4: /readyz 503, then close the HTTPS server within `budgetMs` (destroying what remains at the end). */
  closeServer(budgetMs: number): Promise<Omit<StepReport, 'ms' | 'step'>>;
  /** Alongside step 4: hand the Lease over. */
  releaseLease?: (signal: AbortSignal) => Promise<Omit<StepReport, 'ms' | 'step'>>;
  /** Other things to close alongside (health server, watchers). */
  closeRest(): Promise<void>;
}

export interface ShutdownOptions {
  delayMs: number;
  /** One deadline for teardown and server close together. */
  timeoutMs: number;
  logger: Logger;
  /** Aborts the delay and every step at once (a second signal). */
  signal?: AbortSignal;
  /**
   * After a teardown that deleted the configurations, how long to keep serving before the close:
   * kube-apiservers whose caches lag still call (PROPAGATION_GRACE_MS). Cut to leave the close
   * DRAIN_RESERVE_MS of the deadline.
   */
  graceAfterTeardownMs?: number;
}

/** What the server close always gets of the deadline, whatever came before it. */
export const DRAIN_RESERVE_MS = 1000;

/** Runs `fn` as a named step, turning errors and deadlines into a report instead of a throw. */
async function timedStep(
  step: string,
  budgetMs: number,
  signal: AbortSignal | undefined,
  fn: (signal: AbortSignal) => Promise<Omit<StepReport, 'ms' | 'step'>>,
): Promise<StepReport> {
  const started = performance.now();
  const ms = (): number => Math.round(performance.now() - started);
  try {
    const result = await withTimeout(budgetMs, signal, fn);
    return { step, ms: ms(), ...result };
  } catch (error) {
    const timedOut = isAbortError(error);
    return { step, outcome: timedOut ? 'timed-out' : 'failed', ms: ms(), detail: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The design's shutdown order: stop reconciling; optional delay while still serving (and still
 * ready: see beginShutdown); the configurations
 * deleted (when the teardown policy says so) while still serving, and for a grace after that
 * (kube-apiserver calls until the deletions land, and a kube-apiserver whose cache lags for a
 * while after); then close the server and release the Lease. The teardown starts at once, alongside
 * the delay: when the install is going away (scaled to zero, uninstalled) every endpoint leaves
 * the Service at SIGTERM, so each moment the configurations stay registered after it is a moment
 * in which kube-apiserver calls a Service with no endpoint, and a Fail rule rejects the write.
 * When they are kept (a rolling update) the teardown step does nothing. One deadline, from the
 * end of the delay, bounds teardown and close together; the deletions get at most the deadline
 * minus one second, so draining always has time.
 */
export async function shutdown(parts: ShutdownParts, options: ShutdownOptions): Promise<{ ok: boolean; steps: StepReport[] }> {
  const steps: StepReport[] = [];
  parts.beginShutdown();
  const teardownBudget = Math.max(0, options.timeoutMs - DRAIN_RESERVE_MS);
  const teardown = parts.teardown
    ? timedStep('teardown', teardownBudget, options.signal, (signal) => parts.teardown!(signal, teardownBudget)).then((report) => ({ report, endedAt: performance.now() }))
    : undefined;
  if (options.delayMs > 0) {
    const started = performance.now();
    await sleep(options.delayMs, options.signal).catch(() => undefined);
    steps.push({ step: 'delay', outcome: options.signal?.aborted ? 'skipped' : 'ok', ms: Math.round(performance.now() - started) });
  }
  const deadline = performance.now() + options.timeoutMs;
  const remaining = (): number => Math.max(0, deadline - performance.now());

  if (teardown) {
    const { report, endedAt } = await teardown;
    steps.push(report);
    // The grace counts from the deletions: the delay may already have served part or all of it.
    const graceMs = Math.min((options.graceAfterTeardownMs ?? 0) - (performance.now() - endedAt), remaining() - DRAIN_RESERVE_MS);
    if (report.outcome === 'ok' && (options.graceAfterTeardownMs ?? 0) > 0) {
      // Still serving everything: a kube-apiserver that has not seen the deletions yet still calls.
      const started = performance.now();
      if (graceMs > 0) await sleep(graceMs, options.signal).catch(() => undefined);
      steps.push({ step: 'teardown-grace', outcome: options.signal?.aborted ? 'skipped' : 'ok', ms: Math.round(performance.now() - started) });
    }
  } else {
    steps.push({ step: 'teardown', outcome: 'skipped', ms: 0, detail: 'nothing of this process\'s to delete' });
  }
  const closeBudget = remaining();
  const [close, release] = await Promise.all([
    timedStep('server-close', closeBudget + 250, undefined, () => parts.closeServer(closeBudget)),
    parts.releaseLease
      ? timedStep('lease-release', closeBudget, options.signal, (signal) => parts.releaseLease!(signal))
      : Promise.resolve<StepReport>({ step: 'lease-release', outcome: 'skipped', ms: 0 }),
  ]);
  steps.push(close, release);
  await parts.closeRest().catch((error: unknown) => options.logger.warn({ error: String(error) }, 'closing the rest failed'));

  const ok = steps.every((s) => s.outcome === 'ok' || s.outcome === 'skipped');
  options.logger[ok ? 'info' : 'error'](
    { steps: Object.fromEntries(steps.map((s) => [s.step, s.detail ? `${s.outcome} ${s.ms}ms (${s.detail})` : `${s.outcome} ${s.ms}ms`])) },
    ok ? 'shutdown complete' : 'shutdown finished with problems',
  );
  return { ok, steps };
}
