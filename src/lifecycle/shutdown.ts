import type { Logger } from 'pino';
import { sleep, withTimeout, isAbortError } from '../util/abort.js';

export type StepOutcome = 'ok' | 'skipped' | 'failed' | 'timed-out';

export interface StepReport {
  step: string;
  outcome: StepOutcome;
  ms: number;
  detail?: string;
}

/** The parts the shutdown sequence drives; each is bounded by the signal it is given. */
export interface ShutdownParts {
  /** Step 1: /readyz -> 503, answers end their keep-alive connections, reconcile and lease renewal stopped. */
  stopBeingReady(): void;
  /** Step 3: decide and delete the configurations; undefined when this process registered nothing. */
  teardown?: (signal: AbortSignal, budgetMs: number) => Promise<Omit<StepReport, 'ms' | 'step'>>;
  /** Step 4: close the HTTPS server within `budgetMs` (destroying what remains at the end). */
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
 * The design's shutdown order: not ready; optional delay while still serving; delete the
 * configurations while still serving (kube-apiserver calls until the deletions land, and a
 * kube-apiserver whose cache lags for a while after: the grace); then close the server and
 * release the Lease. One deadline bounds teardown and close together, and the
 * deletions get at most the deadline minus one second, so draining always has time.
 */
export async function shutdown(parts: ShutdownParts, options: ShutdownOptions): Promise<{ ok: boolean; steps: StepReport[] }> {
  const steps: StepReport[] = [];
  parts.stopBeingReady();
  if (options.delayMs > 0) {
    const started = performance.now();
    await sleep(options.delayMs, options.signal).catch(() => undefined);
    steps.push({ step: 'delay', outcome: options.signal?.aborted ? 'skipped' : 'ok', ms: Math.round(performance.now() - started) });
  }
  const deadline = performance.now() + options.timeoutMs;
  const remaining = (): number => Math.max(0, deadline - performance.now());

  if (parts.teardown) {
    const teardownBudget = Math.max(0, options.timeoutMs - DRAIN_RESERVE_MS);
    const teardown = await timedStep('teardown', teardownBudget, options.signal, (signal) => parts.teardown!(signal, teardownBudget));
    steps.push(teardown);
    const graceMs = Math.min(options.graceAfterTeardownMs ?? 0, remaining() - DRAIN_RESERVE_MS);
    if (teardown.outcome === 'ok' && graceMs > 0) {
      // Still serving everything: a kube-apiserver that has not seen the deletions yet still calls.
      const started = performance.now();
      await sleep(graceMs, options.signal).catch(() => undefined);
      steps.push({ step: 'teardown-grace', outcome: options.signal?.aborted ? 'skipped' : 'ok', ms: Math.round(performance.now() - started) });
    }
  } else {
    steps.push({ step: 'teardown', outcome: 'skipped', ms: 0, detail: 'nothing registered by this process' });
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
