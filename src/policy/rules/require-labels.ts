import { isQualifiedName, QUALIFIED_NAME_HINT } from '../../admission/kube-names.js';
import { isRecord, podSpecsOf } from '../../admission/pod-specs.js';
import { regexMatchesWhole, regexProblem } from '../../cel/regular-expressions.js';
import { podAndWorkloadRules, type RuleKind } from '../rule-kind.js';
import type { KubeObject } from '../../admission/types.js';
import { required, type YamlField } from '../../util/yaml-field.js';

export interface RequiredLabel {
  key: string;
  /** When set, the value must match this regular expression (RE2 syntax) as a whole (anchored at both ends). */
  pattern?: string;
}


export interface RequireLabelsParams {
  labels: RequiredLabel[];
}

function labelsIn(metadata: unknown): Record<string, unknown> {
  return isRecord(metadata) && isRecord(metadata['labels']) ? metadata['labels'] : {};
}

function missingLabels(labels: Record<string, unknown>, required: readonly RequiredLabel[], where: string): string[] {
  const findings: string[] = [];
  for (const { key, pattern } of required) {
    const value = labels[key];
    if (typeof value !== 'string') findings.push(`${where} is missing label "${key}"`);
    else if (pattern !== undefined && !regexMatchesWhole(value, pattern)) {
      findings.push(`${where} label "${key}" value "${value}" does not match the pattern ${pattern}`);
    }
  }
  return findings;
}

function describeObject(object: KubeObject): string {
  const name = object.metadata?.name ?? object.metadata?.generateName;
  return name ? `${object.kind ?? 'object'} "${name}"` : (object.kind ?? 'object');
}

/**
 * Labels missing on the object and on its pod template: a workload whose pods would be refused
 * is refused itself, where its author sees the message (a controller's pod creations fail silently).
 */
export function checkRequiredLabels(object: KubeObject, params: RequireLabelsParams): string[] {
  const findings = missingLabels(labelsIn(object.metadata), params.labels, describeObject(object));
  for (const location of podSpecsOf(object)) {
    if (location.description) findings.push(...missingLabels(labelsIn(location.metadata()), params.labels, location.description));
  }
  return findings;
}

function readRequiredLabel(field: YamlField): RequiredLabel | undefined {
  const fields = field.map(['key', 'pattern']);
  if (!fields) return undefined;
  const key = required(fields, 'key', field, (f) => f.string(), 'a label key such as app or app.kubernetes.io/name');
  if (key !== undefined && !isQualifiedName(key)) fields.get('key')?.report(`"${key}" is not a valid label key; it must be ${QUALIFIED_NAME_HINT}`);
  const patternField = fields.get('pattern');
  const pattern = patternField?.text();
  const problem = pattern === undefined ? undefined : regexProblem(pattern);
  if (problem !== undefined) {
    patternField?.report(`is not a valid regular expression (RE2 syntax, as Kubernetes uses): ${problem}`);
    return undefined;
  }
  if (key === undefined) return undefined;
  return pattern !== undefined ? { key, pattern } : { key };
}

export const requireLabels: RuleKind = {
  kind: 'requireLabels',
  type: 'validating',
  defaultRules: podAndWorkloadRules(),
  compile(params, entry) {
    if (!params) {
      entry.report('requireLabels needs "params.labels": a list of { key, pattern? }');
      return undefined;
    }
    const fields = params.map(['labels']);
    if (!fields) return undefined;
    const items = required(fields, 'labels', params, (f) => f.list(), 'a list of { key, pattern? }');
    if (!items) return undefined;
    if (items.length === 0) fields.get('labels')?.report('must list at least one label');
    const labels = items.map(readRequiredLabel);
    if (labels.length === 0 || labels.some((label) => label === undefined)) return undefined;
    const bound: RequireLabelsParams = { labels: labels as RequiredLabel[] };
    return { type: 'validating', check: (object) => checkRequiredLabels(object, bound) };
  },
};
