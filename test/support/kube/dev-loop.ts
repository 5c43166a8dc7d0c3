import { writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repositoryRoot } from '../../../local-cluster/util/repository-root.js';

const LIBRARY = pathToFileURL(join(repositoryRoot(), 'dist', 'src', 'index.js')).href;

/**
 * A compiled handler module as an author's build writes it: a validating webhook on Pods that
 * denies every Pod with `message`, which it takes from a second file of the project (so a reload
 * must load the files the entry imports anew, not the entry alone).
 */
export async function writeHandlerProject(dir: string, message: string): Promise<string> {
  await writeFile(
    join(dir, 'webhooks.js'),
    `import { defineValidatingWebhook } from ${JSON.stringify(LIBRARY)};
import { message } from './message.js';
export const webhooks = [
  defineValidatingWebhook({ name: 'deny-pods', kind: 'Pod', handler: () => ({ allowed: false, message }) }),
];
`,
  );
  await writeMessage(dir, message);
  return join(dir, 'webhooks.js');
}

/** Rewrites the imported file the way an editor or tsc does: a new file renamed over the old one. */
export async function writeMessage(dir: string, message: string): Promise<void> {
  await writeFile(join(dir, 'message.js.tmp'), `export const message = ${JSON.stringify(message)};\n`);
  await rename(join(dir, 'message.js.tmp'), join(dir, 'message.js'));
}
