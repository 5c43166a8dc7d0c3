import type { Command } from './command.js';
import { audit } from './audit.js';
import { evaluate } from './evaluate.js';
import { render } from './render.js';
import { serve } from './serve.js';
import { test } from './test.js';

/**
 * Every command of the binary, in the order `help` lists them. Adding one is adding its file
 * here: its spec (summary, usage, flags, examples) drives parsing, `help` and `<command> --help`,
 * and its `run` is what main.ts calls.
 */
export const COMMANDS: readonly Command[] = [serve, render, evaluate, test, audit];
