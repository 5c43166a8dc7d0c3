import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Webhook } from '../admission/types.js';
import { isAbortError, sleep, withTimeout } from '../util/abort.js';
import { PendingTrigger } from '../util/pending-trigger.js';

export interface HandlerReloadOptions {
  /** Folders whose JavaScript files make up the author's module graph (each module's folder). */
  roots: readonly string[];
  /** Imports the modules anew as load `generation`; rejects with the reason when they cannot serve. */
  load: (generation: number) => Promise<readonly Webhook[]>;
  /** Serves the loaded webhooks; throws (serving what it served) when the set is invalid. */
  replace: (webhooks: readonly Webhook[]) => void;
  /** The fallback poll, besides file events (lost on some file systems and editors' atomic saves). */
  pollIntervalMs: number;
  signal: AbortSignal;
  logger: Logger;
}

/** A module whose top level never settles (an await on a network call) must not stall reloads for good. */
const LOAD_DEADLINE_MS = 30_000;
/** Writes of one build (tsc writes file after file) are taken as one change once the tree holds still this long. */
const SETTLE_MS = 50;
const MAX_SETTLE_ROUNDS = 20;
const MODULE_FILE = /\.(?:m|c)?js$|\.json$/;

/** A stamp of every module file under the roots: equal stamps, nothing was written. */
async function treeStamp(roots: readonly string[]): Promise<string> {
  const parts: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) await visit(path);
      } else if (MODULE_FILE.test(entry.name)) {
        const info = await stat(path).catch(() => undefined);
        if (info) parts.push(`${path}:${info.size}:${info.mtimeMs}`);
      }
    }
  };
  for (const root of roots) await visit(root);
  return parts.sort().join('\n');
}

/** The tree once two reads SETTLE_MS apart agree (bounded: a writer that never stops is taken as it is). */
async function settledStamp(roots: readonly string[], signal: AbortSignal): Promise<string> {
  let stamp = await treeStamp(roots);
  for (let round = 0; round < MAX_SETTLE_ROUNDS; round++) {
    await sleep(SETTLE_MS, signal);
    const next = await treeStamp(roots);
    if (next === stamp) return stamp;
    stamp = next;
  }
  return stamp;
}

/**
 * The dev loop's reload: when a file of the author's module graph changes, the modules are
 * imported anew and their webhooks replace the served ones. Enforcement never lapses: the old
 * handlers answer until the new ones are served, and a module that fails to load (a syntax
 * error, a throw at its top level, an invalid export) keeps the old ones, saying why.
 * Resolves once `signal` aborted.
 */
export async function reloadOnChange(options: HandlerReloadOptions): Promise<void> {
  const { roots, signal, logger } = options;
  const trigger = new PendingTrigger(false);
  const watchers: FSWatcher[] = [];
  for (const root of roots) {
    try {
      const watcher = watch(root, { recursive: true }, (_event, name) => {
        if (name === null || MODULE_FILE.test(name)) trigger.fire();
      });
      watcher.on('error', (error) => logger.warn({ root, error: error.message }, 'file events failed; the poll goes on'));
      watchers.push(watcher);
    } catch (error) {
      logger.warn({ root, error: (error as Error).message }, 'cannot watch for file events; polling');
    }
  }
  let generation = 0;
  let loaded = await treeStamp(roots);
  try {
    while (!signal.aborted) {
      await trigger.take(options.pollIntervalMs, signal);
      const stamp = await settledStamp(roots, signal);
      if (stamp === loaded) continue;
      loaded = stamp;
      await reloadOnce(options, ++generation);
    }
  } catch (error) {
    if (!isAbortError(error) && !signal.aborted) throw error;
  } finally {
    for (const watcher of watchers) watcher.close();
  }
}

async function reloadOnce(options: HandlerReloadOptions, generation: number): Promise<void> {
  const started = performance.now();
  try {
    const webhooks = await withTimeout(LOAD_DEADLINE_MS, options.signal, () => options.load(generation));
    options.replace(webhooks);
    options.logger.info({ generation, ms: Math.round(performance.now() - started), webhooks: webhooks.map((w) => w.name) }, 'handlers reloaded');
  } catch (error) {
    if (options.signal.aborted) return;
    const why = isAbortError(error) ? `the module did not finish loading within ${LOAD_DEADLINE_MS} ms` : error instanceof Error ? error.message : String(error);
    options.logger.error({ generation, error: why }, 'the changed handlers cannot be served; the previous handlers keep answering');
  }
}
