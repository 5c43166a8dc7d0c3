import { isLabelValue, isQualifiedName, LABEL_VALUE_HINT, QUALIFIED_NAME_HINT } from '../admission/kube-names.js';
import type { LabelSelector, LabelSelectorRequirement, MatchCondition } from '../admission/types.js';
import type { KubernetesVersion } from '../util/kubernetes-version.js';
import { conditionPlace, refusalFor } from '../cel/match-conditions.js';
import { required, type YamlField } from '../util/yaml-field.js';

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

function checkLabelKey(key: string, noun = 'label key'): string | undefined {
  return isQualifiedName(key) ? undefined : `${noun} "${key}" is invalid; it must be ${QUALIFIED_NAME_HINT}`;
}

function checkLabelValue(value: string): string | undefined {
  return isLabelValue(value) ? undefined : `label value "${value}" is invalid; it must be ${LABEL_VALUE_HINT}`;
}

/** A label map (`matchLabels`, default labels): valid keys, string values that are valid label values. */
export function readLabelMap(field: YamlField, checkValue: (value: string) => string | undefined = checkLabelValue): Record<string, string> | undefined {
  const entries = field.entries();
  if (!entries) return undefined;
  const labels: Record<string, string> = {};
  for (const { key, keyOffset, value } of entries) {
    const keyProblem = checkLabelKey(key, 'key');
    if (keyProblem) field.report(keyProblem, keyOffset);
    const text = value.string();
    const valueProblem = text === undefined ? undefined : checkValue(text);
    if (valueProblem) value.report(valueProblem);
    if (text !== undefined) labels[key] = text;
  }
  return labels;
}

function readRequirement(field: YamlField): LabelSelectorRequirement | undefined {
  const fields = field.map(['key', 'operator', 'values']);
  if (!fields) return undefined;
  const key = required(fields, 'key', field, (f) => f.string(), 'a label key');
  const keyProblem = key === undefined ? undefined : checkLabelKey(key);
  if (keyProblem) fields.get('key')?.report(keyProblem);
  const operator = required(fields, 'operator', field, (f) => f.oneOf(OPERATORS), `one of ${OPERATORS.join(', ')}`);
  const valuesField = fields.get('values');
  const values = valuesField?.stringList(checkLabelValue);
  if (operator === 'In' || operator === 'NotIn') {
    if (!valuesField || (values && values.length === 0)) {
      (valuesField ?? field).report(`operator ${operator} needs a non-empty "values" list`);
    }
  } else if (operator && valuesField) {
    valuesField.report(`must be absent for operator ${operator} (only In and NotIn take values)`);
  }
  if (key === undefined || operator === undefined) return undefined;
  return values ? { key, operator, values } : { key, operator };
}

/** A LabelSelector (namespaceSelector, objectSelector) checked the way kube-apiserver checks it. */
export function readLabelSelector(field: YamlField): LabelSelector | undefined {
  const fields = field.map(['matchLabels', 'matchExpressions']);
  if (!fields) return undefined;
  const selector: LabelSelector = {};
  const matchLabels = fields.get('matchLabels');
  if (matchLabels) {
    const labels = readLabelMap(matchLabels);
    if (labels) selector.matchLabels = labels;
  }
  const expressions = fields.get('matchExpressions')?.list();
  if (expressions) {
    selector.matchExpressions = expressions.map(readRequirement).filter((r): r is LabelSelectorRequirement => r !== undefined);
  }
  return selector;
}

const MAX_MATCH_CONDITIONS = 64;

/**
 * matchConditions: qualified, unique names and expressions that compile to a bool with the
 * variables and the library kube-apiserver `target` gives them (it refuses the configuration
 * otherwise).
 */
export function readMatchConditions(field: YamlField, target?: KubernetesVersion, webhook?: string): MatchCondition[] | undefined {
  const items = field.list();
  if (!items) return undefined;
  if (items.length > MAX_MATCH_CONDITIONS) field.report(`has ${items.length} entries; at most ${MAX_MATCH_CONDITIONS} are allowed`);
  const seen = new Set<string>();
  const conditions: MatchCondition[] = [];
  for (const item of items) {
    const fields = item.map(['name', 'expression']);
    if (!fields) continue;
    const name = required(fields, 'name', item, (f) => f.string(), 'a qualified name, unique in this webhook');
    const nameField = fields.get('name');
    if (name !== undefined && nameField) {
      if (!isQualifiedName(name)) nameField.report(`"${name}" is not a valid name; it must be ${QUALIFIED_NAME_HINT}`);
      else if (seen.has(name)) nameField.report(`duplicate name "${name}"; each match condition needs its own name`);
      seen.add(name);
    }
    const where = { target, condition: name, webhook };
    const expression = required(fields, 'expression', item, (f) => readMatchExpression(f, where), 'a CEL expression that evaluates to a bool');
    if (name !== undefined && expression !== undefined) conditions.push({ name, expression });
  }
  return conditions;
}

interface ConditionPlace {
  target: KubernetesVersion | undefined;
  condition: string | undefined;
  webhook: string | undefined;
}

function readMatchExpression(field: YamlField, { target, condition, webhook }: ConditionPlace): string | undefined {
  const text = field.text();
  if (text === undefined) return undefined;
  const refused = refusalFor(text, target);
  if (refused === undefined) return text;
  // Against a given kube-apiserver, the log of a server that refuses to start names what to fix.
  const named = target && condition && webhook ? conditionPlace(condition, webhook) : '';
  field.report(`${named}${refused}`);
  return undefined;
}
