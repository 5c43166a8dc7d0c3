import type { ToolOptions } from '../config/tool-args.js';
import type { Config } from '../config/types.js';
import { processIo, type ToolIo } from './tool-io.js';

/** Runs one of the tool sub-commands; resolves with its exit code. */
export async function runTool(config: Config, tool: ToolOptions, io: ToolIo = processIo): Promise<number> {
  switch (tool.command) {
    case 'evaluate':
      return (await import('./evaluate-command.js')).runEvaluate(config, tool, io);
    case 'test':
      return (await import('./test-command.js')).runTests(config, tool, io);
    case 'audit':
      return (await import('./audit-command.js')).runAudit(config, tool, io);
  }
}
