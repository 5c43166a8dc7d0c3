/**
 * CustomResourceDefinitions for the tests of the double's custom resources: the report CRDs the
 * repository ships (manifests/crds, copied from their projects) and small CRDs of example.com
 * written for one behaviour each; and a bounded wait for kube-apiservers' caches.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeApiServer, KubeObject } from '../../../local-cluster/fake-apiserver/index.js';
import { repositoryRoot } from '../../../local-cluster/util/repository-root.js';
import { sleep } from '../../../local-cluster/util/waits.js';

export const CRDS_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export const REPORT_CRDS = {
  reports: 'openreports.io_reports.yaml',
  clusterReports: 'openreports.io_clusterreports.yaml',
  policyReports: 'wgpolicyk8s.io_policyreports.yaml',
  clusterPolicyReports: 'wgpolicyk8s.io_clusterpolicyreports.yaml',
} as const;

/** One of the shipped CRDs, as `kubectl apply` would send it. */
export async function shippedCrd(file: (typeof REPORT_CRDS)[keyof typeof REPORT_CRDS]): Promise<KubeObject> {
  const text = await readFile(join(repositoryRoot(), 'manifests', 'crds', file), 'utf8');
  const [document] = parseAllDocuments(text);
  if (!document) throw new Error(`manifests/crds/${file} holds no document`);
  return document.toJS() as KubeObject;
}

export interface WidgetCrdOptions {
  plural?: string;
  kind?: string;
  group?: string;
  scope?: 'Namespaced' | 'Cluster';
  schema?: Record<string, unknown>;
  subresources?: Record<string, unknown>;
  versions?: Record<string, unknown>[];
}

/** A CRD of example.com with one served, stored version v1 and the schema given (any object by default). */
export function widgetCrd(options: WidgetCrdOptions = {}): KubeObject {
  const plural = options.plural ?? 'widgets';
  const kind = options.kind ?? 'Widget';
  const group = options.group ?? 'example.com';
  const schema = options.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: options.scope ?? 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: options.versions ?? [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, ...(options.subresources ? { subresources: options.subresources } : {}) },
      ],
    },
  };
}

/** Resolves once `apiserver`'s caches hold every store change so far; rejects after `timeoutMs`. */
export async function caughtUp(apiserver: KubeApiServer, timeoutMs: number): Promise<void> {
  const started = performance.now();
  while (apiserver.backlog > 0) {
    if (performance.now() - started > timeoutMs) throw new Error(`${apiserver.name} still ${apiserver.backlog} events behind after ${timeoutMs} ms`);
    await sleep(20);
  }
}
