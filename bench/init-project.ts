/**
 * A project made by `init` from this checkout, as an author from a clone makes one before the
 * package is published: the working tree packed (`npm pack`), `init`, the dependency pointed at
 * the tarball and installed offline from npm's cache, and the scaffold's handlers replaced by two
 * that do what the bench's built-in rules do (require the `app` label; add one label), compiled by
 * the project's own `tsc`. Its start is the project's own: `node dist/src/main.js`.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { packWorkingTree } from '../test/support/tools/npm-package.js';
import { cleanEnvironment, runCommand } from '../test/support/tools/run-command.js';
import { ADDED_LABEL } from './binary-target.js';

const STEP_MS = 10 * 60_000;

/** The project's src/webhooks.ts: typed handlers equivalent to requireLabels (key app, enforce) and defaultLabels (one label). */
export const INIT_PROJECT_WEBHOOKS = `import { defineMutatingWebhook, defineValidatingWebhook, setLabel } from 'kube-admission-server';

export const requireLabels = defineValidatingWebhook({
  name: 'require-labels',
  kind: 'Pod',
  handler: (request) =>
    request.object?.metadata?.labels?.['app'] ? { allowed: true } : { allowed: false, message: 'Pod is missing label "app"' },
});

export const defaultLabels = defineMutatingWebhook({
  name: 'default-labels',
  kind: 'Pod',
  handler: (request) => {
    const object = request.object;
    if (!object) return { allowed: true };
    if (object.metadata?.labels?.[${JSON.stringify(ADDED_LABEL.key)}] === undefined) setLabel(object, ${JSON.stringify(ADDED_LABEL.key)}, ${JSON.stringify(ADDED_LABEL.value)});
    return { allowed: true, object };
  },
});

export const webhooks = [requireLabels, defaultLabels];
`;

/** Makes the project in `into`/bench-webhooks and returns its folder; `repoRoot` is this checkout, built. */
export async function makeInitProject(repoRoot: string, into: string, log: (line: string) => void): Promise<string> {
  const env = cleanEnvironment();
  log('init project: npm pack of the working tree (cached by content)');
  const { tarball } = await packWorkingTree(repoRoot, into, STEP_MS);
  const project = path.join(into, 'bench-webhooks');
  log('init project: init, npm install --offline of the tarball, tsc');
  await runCommand(process.execPath, [path.join(repoRoot, 'dist', 'src', 'main.js'), 'init', project], { env, timeoutMs: STEP_MS });
  const manifestFile = path.join(project, 'package.json');
  const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as { dependencies: Record<string, string> };
  manifest.dependencies['kube-admission-server'] = `file:${tarball}`;
  await writeFile(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(path.join(project, 'src', 'webhooks.ts'), INIT_PROJECT_WEBHOOKS);
  // The scaffold's tests are of its own example handlers, which the bench replaced.
  await rm(path.join(project, 'test'), { recursive: true, force: true });
  await runCommand('npm', ['install', '--offline', '--no-audit', '--no-fund'], { cwd: project, env, timeoutMs: STEP_MS });
  await runCommand(process.execPath, [path.join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: project, env, timeoutMs: STEP_MS });
  return project;
}
