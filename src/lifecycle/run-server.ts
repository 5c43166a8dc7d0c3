/**
 * The whole life of the server: the start (start-up.ts), serving until told to stop, then the
 * bounded shutdown (shutdown.ts) of whatever had started.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config } from '../config/types.js';
import { EXIT_FAILURE, EXIT_INVALID_CONFIG, EXIT_OK } from './exit-codes.js';
import { PolicyFileError } from '../policy/policy-file.js';
import { PROPAGATION_GRACE_MS } from '../registration/propagation-grace.js';
import { shutdown } from './shutdown.js';
import { startUp, type RunOptions, type Started } from './start-up.js';

export type { CustomWebhookUpdates, RunOptions } from './start-up.js';

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * The whole life of the server: startup in the design's order, serving until `stopSignal`,
 * then the bounded shutdown. Resolves with the process exit code; never rejects.
 */
export async function runServer(config: Config, options: RunOptions): Promise<number> {
  const { logger } = options;
  const lifetime = new AbortController();
  const onStop = (): void => lifetime.abort(new Error('shutting down'));
  options.stopSignal.addEventListener('abort', onStop, { once: true });
  if (options.stopSignal.aborted) onStop();
  const started: Started = { loops: [] };
  let exitCode = EXIT_OK;
  try {
    const metricsRegistry = new Registry();
    collectDefaultMetrics({ register: metricsRegistry });
    await startUp({ config, options, started, signal: lifetime.signal, logger, metricsRegistry });
    await untilAborted(options.stopSignal);
    logger.info('shutdown requested');
  } catch (error) {
    if (options.stopSignal.aborted) {
      logger.info('shutdown requested during startup');
    } else {
      exitCode = error instanceof PolicyFileError ? EXIT_INVALID_CONFIG : EXIT_FAILURE;
      const problems = error instanceof PolicyFileError ? { problems: error.problems } : {};
      logger.error({ error: error instanceof Error ? error.message : String(error), ...problems }, 'startup failed; shutting down');
    }
  }
  lifetime.abort(new Error('shutting down'));
  const result = await shutDown(config, options, started);
  return exitCode !== EXIT_OK ? exitCode : result.ok ? EXIT_OK : EXIT_FAILURE;
}

async function shutDown(config: Config, options: RunOptions, started: Started) {
  const { logger } = options;
  // At SIGTERM, before the delay: this starts reading the owner chain the teardown decides on.
  const teardown = started.registration?.teardownStep(options.stopSignal.aborted);
  return await shutdown(
    {
      beginShutdown: () => {
        started.health?.setShuttingDown();
        // Pooled connections from kube-apiserver wind down during the delay, one answer each.
        started.server?.stopKeepAlive();
        started.registration?.stopBackground();
      },
      ...(teardown ? { teardown } : {}),
      closeServer: async (budgetMs) => {
        started.health?.setClosing();
        if (!started.server) return { outcome: 'skipped' };
        const result = await started.server.close(budgetMs);
        return result.drained ? { outcome: 'ok' } : { outcome: 'timed-out', detail: `${result.destroyedSockets} sockets destroyed` };
      },
      ...(started.registration && !config.reachableAt ? { releaseLease: (signal: AbortSignal) => started.registration!.releaseLease(signal) } : {}),
      closeRest: async () => {
        try {
          await Promise.all([started.health?.close(500), started.tls?.stop(), started.clientCa?.stop(), started.policy?.stopped(), started.live?.stopped, started.namespaces?.stop(), ...started.loops]);
        } finally {
          // Last: the teardown, the lease release and the loops above made their API calls.
          started.cluster?.close();
          started.audit?.close();
        }
      },
    },
    {
      delayMs: started.ready ? config.shutdownDelayMs : 0,
      timeoutMs: config.shutdownTimeoutMs,
      graceAfterTeardownMs: PROPAGATION_GRACE_MS,
      logger,
      ...(options.abortShutdown ? { signal: options.abortShutdown } : {}),
    },
  );
}
