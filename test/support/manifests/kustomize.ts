import { requireTool } from '../tools/tools.js';
import { renderObjects, type RenderOptions } from './render-command.js';
import type { KubeObject } from '../../../local-cluster/util/kube-object.js';

export interface KustomizeOptions extends RenderOptions {
  /** kubectl binary; by default .tools/bin/kubectl, else the one on PATH (test/support/tools/tools.ts). */
  kubectlPath?: string;
}

/** Renders a kustomization directory with `kubectl kustomize` (offline) and parses the objects. */
export async function renderKustomization(dir: string, options: KustomizeOptions = {}): Promise<KubeObject[]> {
  const binary = options.kubectlPath ?? requireTool('kubectl');
  const purpose = 'rendering the manifests needs kubectl (with its built-in kustomize v5); `npm run setup` installs it into .tools/bin';
  return renderObjects({ binary, args: ['kustomize', dir], subject: dir, purpose }, options);
}
