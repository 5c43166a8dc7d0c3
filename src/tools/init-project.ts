import { copyFile, mkdir, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOL_BAD_INPUT, TOOL_OK, ToolInputError, type ToolIo } from './tool-io.js';

/**
 * What `init` is told: the folder to write, the project's name (default: the folder's) and the
 * package tarball to depend on instead of the registry's version (from a clone, before a release).
 */
export interface InitOptions {
  target?: string;
  name?: string;
  tarball?: string;
}

/** The package's root: dist/src/tools/ in the package, src/tools/ never runs uncompiled. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCAFFOLD_DIR = join(PACKAGE_ROOT, 'scaffold');

/** npm drops `.gitignore` from packages, so the templates carry such files without their dot. */
const DOTTED = new Set(['gitignore', 'dockerignore']);

/**
 * The name is the npm package's, the image's and the Helm release's: lower case, digits and
 * dashes, starting with a letter, at most 53 characters (Helm's release limit, under the 63 of a
 * Kubernetes label value).
 */
const NAME = /^[a-z]([-a-z0-9]{0,51}[a-z0-9])?$/;

interface OwnPackage {
  name: string;
  version: string;
  engines?: { node?: string };
  devDependencies?: Record<string, string>;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name))).sort();
}

/** The target must not exist, or be empty (a `.git` of a fresh `git init` is fine). */
async function checkTarget(target: string): Promise<void> {
  const entries = await readdir(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    if (error.code === 'ENOTDIR') throw new ToolInputError(`${target} is a file; give a new or empty folder`);
    throw error;
  });
  const present = entries.filter((entry) => entry !== '.git');
  if (present.length > 0) {
    const shown = present.slice(0, 5).join(', ') + (present.length > 5 ? `, and ${present.length - 5} more` : '');
    throw new ToolInputError(`${target} is not empty (${shown}); init writes only into a new or empty folder, so nothing of yours is overwritten: give another folder or empty this one`);
  }
}

/** The tarball `npm pack` makes of this version, as the project holds it: its file name, beside package.json. */
function tarballName(own: OwnPackage): string {
  return `${own.name}-${own.version}.tgz`;
}

/** A tarball init can depend on: a file, named as `npm pack` names this version's (so not another version's). */
async function checkTarball(path: string, own: OwnPackage): Promise<void> {
  const expected = tarballName(own);
  if (basename(path) !== expected) {
    throw new ToolInputError(`--tarball ${path}: expected ${expected}, the tarball \`npm pack\` makes of this version (the project's Dockerfile builds FROM this version's image)`);
  }
  const found = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new ToolInputError(`--tarball ${path}: no such file (make it with \`npm pack\`, or \`npm run init -- DIR\` in a clone, which packs and inits)`);
    throw error;
  });
  if (!found.isFile()) throw new ToolInputError(`--tarball ${path}: not a file`);
}

/**
 * The project's package.json: this package at exactly this version (from the registry, or the
 * tarball beside it), the compiler this package is built with.
 */
function projectPackageJson(name: string, own: OwnPackage, fromTarball: boolean): string {
  const compile = 'tsc -p tsconfig.json';
  const render = 'kube-admission-server render --handlers dist/src/webhooks.js --namespace kube-admission-server';
  const manifest = {
    name,
    version: '1.0.0',
    private: true,
    type: 'module',
    engines: { node: own.engines?.node ?? '>=22.19.0' },
    scripts: {
      build: compile,
      test: `${compile} && node --test "dist/test/**/*.test.js"`,
      dev: `${compile} && node dist/src/main.js --no-register --cert-dir .certs`,
      // Reachable from the cluster: kind and Docker Desktop see the host as host.docker.internal.
      'dev:cluster': `${compile} && kube-admission-server dev --handlers dist/src/webhooks.js --reachable-at \${REACHABLE_AT:-host.docker.internal} --kubeconfig \${KUBECONFIG:-$HOME/.kube/config} --cert-dir .certs/dev`,
      start: 'node dist/src/main.js',
      image: `docker build -t ${name}:1.0.0 .`,
      render: `${compile} && ${render}`,
      'render:rbac': `${compile} && ${render} --handler-rbac manifests > deploy/kustomize/handlers-rbac.yaml && ${render} --handler-rbac values > deploy/helm/handlers-rbac.yaml`,
      deploy: 'kubectl apply -k deploy/kustomize',
    },
    dependencies: { 'kube-admission-server': fromTarball ? `file:${tarballName(own)}` : own.version },
    devDependencies: {
      '@types/node': own.devDependencies?.['@types/node'] ?? '22',
      typescript: own.devDependencies?.['typescript'] ?? '5',
    },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/**
 * Writes the project into a folder next to the target, then moves it into place: an init that
 * fails half-way leaves no half project behind.
 */
async function writeProject(target: string, name: string, own: OwnPackage, tarball: string | undefined): Promise<string[]> {
  const staging = join(dirname(target), `.${basename(target)}.init-${process.pid}`);
  const written: string[] = [];
  try {
    for (const file of await listFiles(SCAFFOLD_DIR)) {
      const text = (await readFile(join(SCAFFOLD_DIR, file), 'utf8')).replaceAll('{{name}}', name).replaceAll('{{version}}', own.version);
      const out = DOTTED.has(basename(file)) ? join(dirname(file), `.${basename(file)}`) : file;
      await mkdir(dirname(join(staging, out)), { recursive: true });
      await writeFile(join(staging, out), text);
      written.push(out);
    }
    await writeFile(join(staging, 'package.json'), projectPackageJson(name, own, tarball !== undefined));
    written.push('package.json');
    if (tarball !== undefined) {
      await copyFile(tarball, join(staging, tarballName(own)));
      written.push(tarballName(own));
    }
    const keptGit = (await readdir(target).catch(() => [] as string[])).includes('.git');
    if (keptGit) {
      for (const entry of await readdir(staging)) await rename(join(staging, entry), join(target, entry));
      await rmdir(staging);
    } else {
      await rmdir(target).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      await rename(staging, target);
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return written.sort();
}

/** `kube-admission-server init DIR`: a project of typed handlers, their tests, image and install; exit 2 on bad input. */
export async function runInit(options: InitOptions, io: ToolIo): Promise<number> {
  try {
    if (!options.target) throw new ToolInputError('give the folder to create: kube-admission-server init my-webhooks');
    const target = resolve(options.target);
    const name = options.name ?? basename(target);
    if (!NAME.test(name)) {
      throw new ToolInputError(
        `"${name}" cannot name the project (npm package, image and Helm release): use lower-case letters, digits and dashes, starting with a letter, at most 53 characters${options.name ? '' : ', or choose it with --name'}`,
      );
    }
    await checkTarget(target);
    const own = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as OwnPackage;
    const tarball = options.tarball === undefined ? undefined : resolve(options.tarball);
    if (tarball !== undefined) await checkTarball(tarball, own);
    await mkdir(dirname(target), { recursive: true });
    const files = await writeProject(target, name, own, tarball);
    const shown = relative(process.cwd(), target) || '.';
    const source = tarball === undefined ? `kube-admission-server ${own.version}` : `kube-admission-server ${own.version} from ${tarballName(own)}`;
    io.stdout(
      `Created ${name} in ${shown} (${source}):\n${files.map((f) => `  ${f}\n`).join('')}\n` +
        `Next:\n  cd ${shown}\n  npm install\n  npm test\n\nREADME.md lists the five commands: test, dev, image, render, deploy.\n`,
    );
    return TOOL_OK;
  } catch (error) {
    if (error instanceof ToolInputError) {
      io.stderr(`kube-admission-server init: ${error.message}\n`);
      return TOOL_BAD_INPUT;
    }
    throw error;
  }
}
