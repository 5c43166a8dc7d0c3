/**
 * The kustomize components under manifests/components, each rendered the way an overlay picks
 * it: a throwaway overlay of the base plus the component (relative paths: kustomize refuses
 * absolute ones), rendered with `kubectl kustomize`.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { stringify } from 'yaml';
import { renderKustomization } from './kustomize.js';
import type { KubeObject } from '../../../local-cluster/util/kube-object.js';

export function componentsDir(repoRoot: string): string {
  return join(repoRoot, 'manifests', 'components');
}

/** Every component's directory name, so a new one is covered without listing it. */
export async function componentNames(repoRoot: string): Promise<string[]> {
  const entries = await readdir(componentsDir(repoRoot), { withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
}

/** The base with `components` applied, as an overlay in the install's namespace would render it. */
export async function renderWithComponents(repoRoot: string, components: readonly string[]): Promise<KubeObject[]> {
  const overlay = await mkdtemp(join(tmpdir(), 'kas-overlay-'));
  try {
    const kustomization = {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      namespace: 'kube-admission-server',
      resources: [relative(overlay, join(repoRoot, 'manifests', 'base'))],
      components: components.map((name) => relative(overlay, join(componentsDir(repoRoot), name))),
    };
    await writeFile(join(overlay, 'kustomization.yaml'), stringify(kustomization));
    return await renderKustomization(overlay);
  } finally {
    await rm(overlay, { recursive: true, force: true });
  }
}
