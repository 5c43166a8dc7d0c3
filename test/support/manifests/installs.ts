/**
 * Every way the repository installs the server, rendered: the kustomize base and each overlay,
 * and the Helm chart with the values that correspond to them. The manifest tests hold every
 * install to the same checks, and test/chart-helm.test.ts holds each chart render equal to its
 * kustomize counterpart.
 */
import { join } from 'node:path';
import { requireTool } from '../tools/tools.js';
import { renderHelmChart } from './helm.js';
import { kustomizations } from './kustomizations.js';
import { renderKustomization } from './kustomize.js';
import type { KubeObject } from '../../../local-cluster/util/kube-object.js';
import { cachedRender, renderKey } from './render-cache.js';

export const RELEASE = 'kube-admission-server';
export const NAMESPACE = 'kube-admission-server';

export interface Install {
  /** "base" or the overlay's directory name; "helm", "helm-<overlay>" for the chart. */
  name: string;
  tool: 'kustomize' | 'helm';
  /** For a chart render: the kustomization it must agree with. */
  counterpart?: string;
  objects: KubeObject[];
}

/** Values that make the chart render what each overlay renders (the base: the chart's defaults). */
export const CHART_VALUES_FOR: Readonly<Record<string, Record<string, unknown>>> = {
  base: {},
  'cert-manager': { tls: { mode: 'cert-manager' } },
  'single-replica': { replicaCount: 1 },
  'custom-handlers': {
    image: { repository: 'registry.example.com/my-webhooks', tag: '1.0.0' },
    entryModule: 'handlers/dist/src/main.js',
    args: ['--log-format', 'json'],
    env: [{ name: 'ALLOWED_REGISTRIES', value: 'registry.example.com' }],
    envFrom: [{ configMapRef: { name: 'my-webhooks-settings', optional: true } }],
    extraVolumes: [{ name: 'my-webhooks-data', configMap: { name: 'my-webhooks-data', optional: true } }],
    extraVolumeMounts: [{ name: 'my-webhooks-data', mountPath: '/etc/my-webhooks', readOnly: true }],
    // What `render --handler-rbac values` prints for the handlers whose manifests the overlay holds.
    handlerRbac: {
      cluster: { rules: [{ apiGroups: [''], resources: ['resourcequotas'], verbs: ['get'], resourceNames: ['compute'] }], grantedFor: 'quota-check: get resourcequotas (compares replicas with the quota)' },
      namespaces: {
        platform: { rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['quota-exceptions'] }], grantedFor: 'quota-check: get configmaps (reads the exceptions)' },
      },
    },
  },
};

export function chartDir(repoRoot: string): string {
  return join(repoRoot, 'charts', 'kube-admission-server');
}

export function renderChart(repoRoot: string, values: Record<string, unknown> = {}, releaseName = RELEASE, namespace = NAMESPACE): Promise<KubeObject[]> {
  return renderHelmChart(chartDir(repoRoot), { releaseName, namespace, values });
}

/** Every install, rendered; cached across the test files until a manifest, the chart or a tool changes. */
export async function renderInstalls(repoRoot: string): Promise<Install[]> {
  const key = await renderKey([join(repoRoot, 'manifests'), chartDir(repoRoot)], [requireTool('kubectl'), requireTool('helm')], { CHART_VALUES_FOR, RELEASE, NAMESPACE });
  return cachedRender(key, () => renderAll(repoRoot));
}

async function renderAll(repoRoot: string): Promise<Install[]> {
  const installs: Install[] = [];
  for (const { name, dir } of await kustomizations(repoRoot)) {
    installs.push({ name, tool: 'kustomize', objects: await renderKustomization(dir) });
  }
  for (const [overlay, values] of Object.entries(CHART_VALUES_FOR)) {
    const name = overlay === 'base' ? 'helm' : `helm-${overlay}`;
    installs.push({ name, tool: 'helm', counterpart: overlay, objects: await renderChart(repoRoot, values) });
  }
  return installs;
}
