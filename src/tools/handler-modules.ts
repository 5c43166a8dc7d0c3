import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Webhook } from '../admission/types.js';
import { versionedUrl } from './fresh-imports.js';
import { ToolInputError } from './tool-io.js';

function isWebhook(value: unknown): value is Webhook {
  const w = value as Partial<Webhook> | null;
  return typeof w === 'object' && w !== null && typeof w.name === 'string' && (w.type === 'validating' || w.type === 'mutating') && typeof w.handler === 'function';
}

/**
 * Custom webhooks from JavaScript modules (compiled TypeScript using the library API): each
 * module exports `webhooks` (an array of defineValidatingWebhook/defineMutatingWebhook results)
 * or such an array as its default export. A `generation` imports the module anew (the dev loop's
 * reload; with freshImportsUnder, the local modules it imports too).
 */
export async function loadHandlerModules(paths: readonly string[], options: { generation?: number } = {}): Promise<Webhook[]> {
  const webhooks: Webhook[] = [];
  for (const path of paths) {
    let module: { webhooks?: unknown; default?: unknown };
    try {
      module = (await import(versionedUrl(pathToFileURL(resolve(path)).href, options.generation))) as typeof module;
    } catch (error) {
      throw new ToolInputError(`${path}: cannot load the handler module: ${(error as Error).message}`);
    }
    const exported = module.webhooks ?? module.default;
    if (!Array.isArray(exported) || !exported.every(isWebhook)) {
      throw new ToolInputError(`${path}: must export "webhooks" (or a default export): an array of webhooks made with defineValidatingWebhook / defineMutatingWebhook`);
    }
    webhooks.push(...exported);
  }
  return webhooks;
}
