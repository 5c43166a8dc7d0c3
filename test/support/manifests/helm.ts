import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireTool } from '../tools/tools.js';
import { renderObjects, type RenderOptions } from './render-command.js';
import type { KubeObject } from '../../../local-cluster/util/kube-object.js';

export interface HelmTemplateOptions extends RenderOptions {
  releaseName: string;
  namespace: string;
  /** Values on top of the chart's values.yaml (as a values file: schema-checked by helm). */
  values?: Record<string, unknown>;
  /** helm binary; by default .tools/bin/helm, else the one on PATH (test/support/tools/tools.ts). */
  helmPath?: string;
}

/** Renders a chart offline with `helm template` (values checked against values.schema.json) and parses the objects. */
export async function renderHelmChart(chartDir: string, options: HelmTemplateOptions): Promise<KubeObject[]> {
  const binary = options.helmPath ?? requireTool('helm');
  const scratch = await mkdtemp(join(tmpdir(), 'kas-helm-values-'));
  try {
    const valuesFile = join(scratch, 'values.json');
    await writeFile(valuesFile, JSON.stringify(options.values ?? {}));
    const args = ['template', options.releaseName, chartDir, '--namespace', options.namespace, '--values', valuesFile];
    const purpose = 'rendering the chart needs helm; `npm run setup` installs it into .tools/bin';
    return await renderObjects({ binary, args, subject: chartDir, purpose }, options);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
