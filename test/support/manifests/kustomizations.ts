import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface Kustomization {
  /** "base" or the overlay's directory name. */
  name: string;
  dir: string;
}

/** The base and every overlay under manifests/overlays, so a new overlay is covered without listing it. */
export async function kustomizations(repoRoot: string): Promise<Kustomization[]> {
  const overlaysDir = join(repoRoot, 'manifests', 'overlays');
  const overlays = (await readdir(overlaysDir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({ name: entry.name, dir: join(overlaysDir, entry.name) }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return [{ name: 'base', dir: join(repoRoot, 'manifests', 'base') }, ...overlays];
}
