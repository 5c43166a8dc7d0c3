import { isRecord } from '../../admission/pod-specs.js';
import { podRules, type RuleKind } from '../rule-kind.js';
import { readLabelMap } from '../../webhooks/selector-fields.js';
import type { KubeObject } from '../../admission/types.js';

export interface DefaultLabelsParams {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

function fillAbsent(metadata: Record<string, unknown>, field: 'labels' | 'annotations', defaults: Record<string, string>): string[] {
  const entries = Object.entries(defaults);
  if (entries.length === 0) return [];
  const current = isRecord(metadata[field]) ? metadata[field] : {};
  const added = entries.filter(([key]) => !(key in current));
  if (added.length === 0) return [];
  metadata[field] = { ...current, ...Object.fromEntries(added) };
  const singular = field === 'labels' ? 'label' : 'annotation';
  return added.map(([key, value]) => `add ${singular} ${key}=${JSON.stringify(value)}`);
}

/**
 * Adds the default labels and annotations the object lacks, never overwriting a value the user
 * set; a second run changes nothing.
 */
export function applyDefaultLabels(object: KubeObject, params: DefaultLabelsParams): string[] {
  const record = object as Record<string, unknown>;
  if (!isRecord(record['metadata'])) record['metadata'] = {};
  const metadata = record['metadata'] as Record<string, unknown>;
  return [...fillAbsent(metadata, 'labels', params.labels), ...fillAbsent(metadata, 'annotations', params.annotations)];
}

const ANNOTATION_VALUE_MAX = 256 * 1024;

export const defaultLabels: RuleKind = {
  kind: 'defaultLabels',
  type: 'mutating',
  defaultRules: [podRules(['CREATE'])],
  compile(params, entry) {
    if (!params) {
      entry.report('defaultLabels needs "params" with "labels" and/or "annotations" (maps of key: value)');
      return undefined;
    }
    const fields = params.map(['labels', 'annotations']);
    if (!fields) return undefined;
    const labelsField = fields.get('labels');
    const annotationsField = fields.get('annotations');
    const labels = labelsField ? readLabelMap(labelsField) : {};
    // Annotation values are free text; only the keys follow the label key syntax.
    const annotations = annotationsField ? readLabelMap(annotationsField, (v) => (v.length > ANNOTATION_VALUE_MAX ? 'is too long' : undefined)) : {};
    if (!labels || !annotations) return undefined;
    if (Object.keys(labels).length + Object.keys(annotations).length === 0) {
      params.report('must set at least one label or annotation');
      return undefined;
    }
    const bound: DefaultLabelsParams = { labels, annotations };
    return { type: 'mutating', mutate: (object) => applyDefaultLabels(object, bound), nativeMutation: { kind: 'defaultLabels', ...bound } };
  },
};
