import { DNS1123_LABEL_HINT, isDns1123Label } from './kube-names.js';
import { WEBHOOK_DEFAULTS, type PolicyEntry } from './policy.js';
import type { CompiledRule } from './rule-kind.js';
import { readRules } from './rule-fields.js';
import { BUILT_IN_RULES } from './rules/index.js';
import { readLabelSelector, readMatchConditions } from './selector-fields.js';
import type { FailurePolicy, MatchPolicy, ReinvocationPolicy, RuleMode, SideEffects, WebhookSpec, WebhookType } from './types.js';
import { optional, required, type YamlField } from './yaml-field.js';

export const ENTRY_FIELDS = [
  'name',
  'kind',
  'mode',
  'params',
  'rules',
  'failurePolicy',
  'sideEffects',
  'timeoutSeconds',
  'matchPolicy',
  'reinvocationPolicy',
  'namespaceSelector',
  'objectSelector',
  'matchConditions',
] as const;

const MODES: readonly RuleMode[] = ['enforce', 'warn', 'audit'];
const FAILURE_POLICIES: readonly FailurePolicy[] = ['Fail', 'Ignore'];
const SIDE_EFFECTS: readonly SideEffects[] = ['None', 'NoneOnDryRun'];
const MATCH_POLICIES: readonly MatchPolicy[] = ['Exact', 'Equivalent'];
const REINVOCATION_POLICIES: readonly ReinvocationPolicy[] = ['Never', 'IfNeeded'];

export interface ParsedEntry {
  /** As far as they could be read: duplicates are found even among entries with other problems. */
  name?: string;
  type?: WebhookType;
  nameField?: YamlField;
  /** Present when the entry has no problem. */
  built?: { entry: PolicyEntry; rule: CompiledRule };
}

function readName(field: YamlField): string | undefined {
  const name = field.string();
  if (name !== undefined && !isDns1123Label(name)) {
    field.report(`"${name}" is not a valid webhook name; it must be ${DNS1123_LABEL_HINT} (it becomes the path /validate/<name> or /mutate/<name>)`);
    return undefined;
  }
  return name;
}

/** One `webhooks[i]` entry: its built-in rule, parameters and webhook fields, with defaults. */
export function readEntry(field: YamlField): ParsedEntry {
  const fields = field.map(ENTRY_FIELDS);
  if (!fields) return {};
  const kinds = [...BUILT_IN_RULES.keys()].join(', ');
  const name = required(fields, 'name', field, readName, DNS1123_LABEL_HINT);
  const kind = required(fields, 'kind', field, (f) => f.oneOf([...BUILT_IN_RULES.keys()]), `one of ${kinds}`);
  const ruleKind = kind === undefined ? undefined : BUILT_IN_RULES.get(kind);
  const type = ruleKind?.type;
  const mode = optional(fields, 'mode', (f) => f.oneOf(MODES), WEBHOOK_DEFAULTS.mode);
  const rules = optional(fields, 'rules', readRules, structuredClone(ruleKind?.defaultRules ?? []));
  const defaultFailurePolicy = type === 'mutating' ? WEBHOOK_DEFAULTS.mutatingFailurePolicy : WEBHOOK_DEFAULTS.validatingFailurePolicy;
  const failurePolicy = optional(fields, 'failurePolicy', (f) => f.oneOf(FAILURE_POLICIES), defaultFailurePolicy);
  const sideEffects = optional(fields, 'sideEffects', (f) => f.oneOf(SIDE_EFFECTS), WEBHOOK_DEFAULTS.sideEffects);
  const timeoutSeconds = optional(fields, 'timeoutSeconds', (f) => f.integer(1, 30), WEBHOOK_DEFAULTS.timeoutSeconds);
  const matchPolicy = optional(fields, 'matchPolicy', (f) => f.oneOf(MATCH_POLICIES), WEBHOOK_DEFAULTS.matchPolicy);
  const reinvocationField = fields.get('reinvocationPolicy');
  if (reinvocationField && type === 'validating') {
    reinvocationField.report(`only mutating rules take reinvocationPolicy; ${kind} is a validating rule`);
  }
  const reinvocationPolicy = optional(fields, 'reinvocationPolicy', (f) => f.oneOf(REINVOCATION_POLICIES), WEBHOOK_DEFAULTS.reinvocationPolicy);
  const namespaceSelectorField = fields.get('namespaceSelector');
  const namespaceSelector = namespaceSelectorField ? readLabelSelector(namespaceSelectorField) : undefined;
  const objectSelectorField = fields.get('objectSelector');
  const objectSelector = objectSelectorField ? readLabelSelector(objectSelectorField) : undefined;
  const matchConditionsField = fields.get('matchConditions');
  const matchConditions = matchConditionsField ? readMatchConditions(matchConditionsField) : undefined;
  const rule = ruleKind?.compile(fields.get('params'), field);

  const known: ParsedEntry = { name, type, nameField: fields.get('name') };
  if (!name || !ruleKind || !type || !rule || !mode || !rules || !failurePolicy || !sideEffects || !timeoutSeconds || !matchPolicy || !reinvocationPolicy) {
    return known;
  }
  const spec: WebhookSpec = { name, type, rules, failurePolicy, sideEffects, timeoutSeconds, matchPolicy };
  if (type === 'mutating') spec.reinvocationPolicy = reinvocationPolicy;
  if (namespaceSelector) spec.namespaceSelector = namespaceSelector;
  if (objectSelector) spec.objectSelector = objectSelector;
  if (matchConditions && matchConditions.length > 0) spec.matchConditions = matchConditions;
  return { ...known, built: { entry: { spec, kind: ruleKind.kind, mode }, rule } };
}
