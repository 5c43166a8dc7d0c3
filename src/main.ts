#!/usr/bin/env node
import nodeModule from 'node:module';
import type { ProcessServices, SignalHandling } from './commands/command.js';
import { COMMANDS } from './commands/index.js';
import { loadConfig, processEnvironment } from './config/load-config.js';
import type { Config } from './config/types.js';
import { EXIT_FAILURE, EXIT_INVALID_CONFIG, EXIT_OK } from './lifecycle/exit-codes.js';
import type { ToolIo } from './tools/tool-io.js';

/**
 * A report piped to another program is written asynchronously once the pipe is full: exiting
 * before it drained would cut it short. Bounded: a reader that stopped reading must not keep the
 * process alive.
 */
function drainOutput(done: () => void): void {
  setTimeout(done, 10_000).unref();
  process.stdout.write('', () => process.stderr.write('', () => done()));
}

/** What must be written before the process exits: a command's report by default, its logs once it has a logger. */
let flushLogs = drainOutput;

const processIo: ToolIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stdin: process.stdin,
};

/** The logger and signal handling of a command that runs until it is told to stop. */
async function startProcess(config: Config, logTo: 'stdout' | 'stderr', signals: SignalHandling): Promise<ProcessServices> {
  const { createLogger } = await import('./lifecycle/logger.js');
  const logger = createLogger(config.logLevel, logTo === 'stderr' ? 2 : 1, { format: config.logFormat });
  flushLogs = (done) => {
    let flushed = false;
    const afterLogs = (): void => {
      if (flushed) return;
      flushed = true;
      // A command that logs to stderr prints its result on stdout (render): that must arrive whole.
      if (logTo === 'stderr') drainOutput(done);
      else done();
    };
    // Bounded: a stdout that no longer drains must not keep the process from exiting.
    setTimeout(afterLogs, 1000).unref();
    logger.flush(() => afterLogs());
  };
  const stop = new AbortController();
  const abortShutdown = new AbortController();
  let hardDeadline: NodeJS.Timeout | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!stop.signal.aborted) {
      const again = signals.second === 'finish-teardown' ? 'the deletion of the registrations finishes even if it is sent again' : 'send it again to exit at once';
      logger.info({ signal }, `signal received; shutting down gracefully (${again})`);
      stop.abort(new Error(signal));
      return;
    }
    if (signals.second === 'finish-teardown') {
      if (hardDeadline) return;
      // The teardown goes on (its own deadline bounds it); this bounds a shutdown that would hang.
      hardDeadline = setTimeout(() => process.exit(EXIT_FAILURE), signals.hardDeadlineMs).unref();
      process.stderr.write(`kube-admission-server: second ${signal}: still deleting what was registered (exiting within ${signals.hardDeadlineMs} ms at most)\n`);
      return;
    }
    // Straight to stderr (synchronous on pipes): the batched logger would not get to write it.
    process.stderr.write(`kube-admission-server: second ${signal}: exiting at once\n`);
    abortShutdown.abort(new Error(signal));
    process.exit(EXIT_FAILURE);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return { logger, stopSignal: stop.signal, abortShutdown: abortShutdown.signal };
}

/** The process entry: command line -> the command's run -> exit code. The only place that exits. */
async function main(): Promise<number> {
  const loaded = loadConfig(process.argv.slice(2), processEnvironment, COMMANDS);
  if (loaded.kind === 'help') {
    process.stdout.write(loaded.text);
    return EXIT_OK;
  }
  if (loaded.kind === 'invalid') {
    process.stderr.write(`kube-admission-server: invalid configuration:\n${loaded.problems.map((p) => `  ${p}\n`).join('')}`);
    return EXIT_INVALID_CONFIG;
  }
  const { config, options, spec } = loaded;
  let started: Promise<ProcessServices> | undefined;
  return await spec.run({ config, options, io: processIo, startProcess: (logTo, signals = { second: 'exit-at-once' }) => (started ??= startProcess(config, logTo, signals)) });
}

// The commands load their implementation on demand (hundreds of modules for audit's Kubernetes
// client): Node's compile cache (NODE_COMPILE_CACHE's directory, else one under the temporary
// directory) spares a later run compiling them again. Nothing to do when it cannot be written.
// Looked up, not imported by name: an unsupported Node without it (20) still runs the command
// as before instead of failing to link main.js.
nodeModule.enableCompileCache?.();

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
