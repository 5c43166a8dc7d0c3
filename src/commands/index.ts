import type { Command } from './command.js';
import { audit } from './audit.js';
import { dev } from './dev.js';
import { evaluate } from './evaluate.js';
import { importPolicies } from './import.js';
import { render } from './render.js';
import { serve } from './serve.js';
import { test } from './test.js';
import { types } from './types.js';
import { init } from './init.js';

/**
 * Every command of the binary, in the order `help` lists them. Adding one is adding its file
 * here: its spec (summary, usage, flags, examples) drives parsing, `help` and `<command> --help`,
 * and its `run` is what main.ts calls.
 */
export const COMMANDS: readonly Command[] = [serve, render, dev, evaluate, test, audit, importPolicies, types, init];
