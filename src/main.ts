#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { renderHelp } from './config/help.js';
import { loadConfig } from './config/load-config.js';
import { EXIT_FAILURE, EXIT_INVALID_CONFIG, EXIT_OK } from './lifecycle/exit-codes.js';
import { prewarmRsaKeys } from './tls/keys.js';

let flushLogs = (done: () => void): void => done();

/** The process entry: config -> run -> exit code. The only place that exits. */
async function main(): Promise<number> {
  const loaded = loadConfig(process.argv.slice(2));
  if (loaded.kind === 'help') {
    process.stdout.write(renderHelp());
    return EXIT_OK;
  }
  if (loaded.kind === 'invalid') {
    process.stderr.write(`kube-admission-server: invalid configuration:\n${loaded.problems.map((p) => `  ${p}\n`).join('')}`);
    return EXIT_INVALID_CONFIG;
  }
  const { config, command } = loaded;
  if (loaded.tool) {
    // The tools print reports, not logs: nothing below (TLS, signals, logger) concerns them.
    const { runTool } = await import('./tools/run-tool.js');
    // A report piped to another program is written asynchronously: exiting before it drained
    // would cut it short. Bounded, like the logs' flush.
    flushLogs = (done) => {
      setTimeout(done, 10_000).unref();
      process.stdout.write('', () => process.stderr.write('', () => done()));
    };
    return await runTool(config, loaded.tool);
  }
  // A first start in generate mode needs a CA key and a leaf key: generate them on the thread
  // pool while the rest of the server loads. Not when local material is already there to reuse.
  const localMaterial = !config.clusterConfigured && existsSync(join(config.certDir, 'tls.key'));
  if (config.tlsMode === 'generate' && !localMaterial) prewarmRsaKeys(2);
  const [{ createLogger }, { PolicyFileError }] = await Promise.all([import('./lifecycle/logger.js'), import('./lifecycle/policy-reloader.js')]);
  const logger = createLogger(config.logLevel, command === 'render' ? 2 : 1, { format: config.logFormat });
  flushLogs = (done) => {
    // Bounded: a stdout that no longer drains must not keep the process from exiting.
    setTimeout(done, 1000).unref();
    logger.flush(() => done());
  };
  const stop = new AbortController();
  const abortShutdown = new AbortController();

  const onSignal = (signal: NodeJS.Signals): void => {
    if (!stop.signal.aborted) {
      logger.info({ signal }, 'signal received; shutting down gracefully (send it again to exit at once)');
      stop.abort(new Error(signal));
      return;
    }
    // Straight to stderr (synchronous on pipes): the batched logger would not get to write it.
    process.stderr.write(`kube-admission-server: second ${signal}: exiting at once\n`);
    abortShutdown.abort(new Error(signal));
    process.exit(EXIT_FAILURE);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  if (command === 'render') {
    try {
      const { renderConfigurations } = await import('./lifecycle/render.js');
      process.stdout.write(await renderConfigurations(config, logger, stop.signal));
      return EXIT_OK;
    } catch (error) {
      if (error instanceof PolicyFileError) {
        process.stderr.write(`kube-admission-server: ${error.message}\n`);
        return EXIT_INVALID_CONFIG;
      }
      logger.error({ error: error instanceof Error ? error.message : String(error) }, 'render failed');
      return EXIT_FAILURE;
    }
  }
  const { runServer } = await import('./lifecycle/run-server.js');
  return await runServer(config, { stopSignal: stop.signal, abortShutdown: abortShutdown.signal, logger });
}

process.on('unhandledRejection', (reason) => {
  process.stderr.write(`kube-admission-server: unhandled rejection (a bug): ${reason instanceof Error ? reason.stack : String(reason)}\n`);
  process.exit(EXIT_FAILURE);
});

main().then(
  (code) => {
    // Log writes are asynchronous: flush them before exiting.
    flushLogs(() => process.exit(code));
  },
  (error: unknown) => {
    process.stderr.write(`kube-admission-server: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(EXIT_FAILURE);
  },
);
