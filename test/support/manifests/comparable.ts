/**
 * Two installs agree when their objects are equal up to what is bookkeeping of the tool that
 * rendered them: Helm's standard labels (the chart's version, the release, the manager) and the
 * order in which a strategic-merge patch leaves named lists (kustomize moves patched env entries,
 * volumes and mounts to the front; with no `$(VAR)` references and no nested mount paths in
 * these manifests, Kubernetes reads no meaning into that order). Policy files in
 * ConfigMaps compare parsed, so comments and key order do not count.
 */
import { parse } from 'yaml';
import type { KubeObject } from '../../../local-cluster/util/kube-object.js';

export const HELM_BOOKKEEPING_LABELS: readonly string[] = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/instance', 'app.kubernetes.io/version'];

const SORT_BY: Readonly<Record<string, string>> = { env: 'name', volumes: 'name', volumeMounts: 'mountPath' };

export function comparable(object: KubeObject): unknown {
  const copy = normalise(structuredClone(object)) as KubeObject;
  if (copy.kind === 'ConfigMap' && copy['data']) {
    copy['data'] = Object.fromEntries(Object.entries(copy['data'] as Record<string, string>).map(([key, text]) => [key, key.endsWith('.yaml') ? parse(text) : text]));
  }
  return copy;
}

function normalise(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) {
    const items = value.map((item) => normalise(item));
    const sortKey = SORT_BY[key];
    return sortKey ? items.sort((a, b) => String((a as Record<string, unknown>)[sortKey]).localeCompare(String((b as Record<string, unknown>)[sortKey]))) : items;
  }
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([field]) => !HELM_BOOKKEEPING_LABELS.includes(field))
      .map(([field, item]) => [field, normalise(item, field)]),
  );
}

export const objectId = (object: KubeObject): string => `${object.kind}/${object.metadata.name}`;
