import type { Logger } from 'pino';
import type { CommandSpec } from '../config/command-spec.js';
import type { Config } from '../config/types.js';
import type { ToolIo } from '../tools/tool-io.js';

/** What a command that runs until it is told to stop gets from the process (main.ts owns signals and the exit). */
export interface ProcessServices {
  logger: Logger;
  /** Aborts on the first SIGTERM or SIGINT: shut down gracefully. */
  stopSignal: AbortSignal;
  /** Aborts on the second signal, just before the process exits at once. */
  abortShutdown: AbortSignal;
}

/**
 * What a second SIGTERM/SIGINT does. `exit-at-once` (the server): exit now. `finish-teardown` (the
 * dev loop, where Ctrl-C is pressed twice by habit): keep deleting what was registered, and exit
 * at `hardDeadlineMs` after it at the latest.
 */
export type SignalHandling = { second: 'exit-at-once' } | { second: 'finish-teardown'; hardDeadlineMs: number };

/** What a command's `run` gets. */
export interface CommandContext<O> {
  config: Config;
  options: O;
  /** Where a report goes; tests pass their own. */
  io: ToolIo;
  /** The logger and signal handling, for commands that log and stop on SIGTERM; set up on the first call. */
  startProcess(logTo: 'stdout' | 'stderr', signals?: SignalHandling): Promise<ProcessServices>;
}

/** A command: its spec (help, flags, parsing) and how it runs, resolving with the exit code. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface Command<O = any> extends CommandSpec<O> {
  run(context: CommandContext<O>): Promise<number>;
}

/** A command with its options type checked against its flags and its run (the list erases it). */
export function defineCommand<O>(command: Command<O>): Command<O> {
  return command;
}
