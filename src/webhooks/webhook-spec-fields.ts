import type { KubernetesVersion } from '../util/kubernetes-version.js';
import { DNS1123_LABEL_HINT, isDns1123Label } from '../admission/kube-names.js';
import { readRules } from './rule-fields.js';
import { readLabelSelector, readMatchConditions } from './selector-fields.js';
import type { FailurePolicy, MatchPolicy, ReinvocationPolicy, RuleMode, RuleWithOperations, SideEffects, WebhookSpec, WebhookType } from '../admission/types.js';
import { optional, required, type YamlField } from '../util/yaml-field.js';

/** Defaults of every webhook field a policy entry may leave out. */
export const WEBHOOK_DEFAULTS = Object.freeze({
  /** Enforcing validating webhooks fail closed: a broken server must not let forbidden objects in. */
  validatingFailurePolicy: 'Fail',
  /**
   * A rule in `warn` or `audit` cannot deny, so it must not be able to block through a failed
   * call either: whatever its type, it fails open unless the entry says otherwise.
   */
  nonEnforcingFailurePolicy: 'Ignore',
  /** Mutating webhooks fail open (kube-apiserver's good practice); validation catches the rest. */
  mutatingFailurePolicy: 'Ignore',
  sideEffects: 'None',
  /** Short: a slow webhook slows every matching request in the cluster. */
  timeoutSeconds: 5,
  matchPolicy: 'Equivalent',
  reinvocationPolicy: 'Never',
  mode: 'enforce',
  /** One call per write whatever the number of rules: grouped unless the policy says `grouping: none`. */
  grouping: 'auto',
} as const);

/** The failurePolicy of a webhook whose entry sets none: closed only for an enforcing validating rule. */
export function defaultFailurePolicy(type: WebhookType | undefined, mode: RuleMode): FailurePolicy {
  if (mode !== 'enforce') return WEBHOOK_DEFAULTS.nonEnforcingFailurePolicy;
  return type === 'mutating' ? WEBHOOK_DEFAULTS.mutatingFailurePolicy : WEBHOOK_DEFAULTS.validatingFailurePolicy;
}

/** The fields of a webhook that a policy entry or a custom webhook definition may set. */
export const WEBHOOK_SPEC_FIELDS = [
  'name',
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

const FAILURE_POLICIES: readonly FailurePolicy[] = ['Fail', 'Ignore'];
const SIDE_EFFECTS: readonly SideEffects[] = ['None', 'NoneOnDryRun'];
const MATCH_POLICIES: readonly MatchPolicy[] = ['Exact', 'Equivalent'];
const REINVOCATION_POLICIES: readonly ReinvocationPolicy[] = ['Never', 'IfNeeded'];

function readName(field: YamlField): string | undefined {
  const name = field.string();
  if (name !== undefined && !isDns1123Label(name)) {
    field.report(`"${name}" is not a valid webhook name; it must be ${DNS1123_LABEL_HINT} (it becomes the path /validate/<name> or /mutate/<name>)`);
    return undefined;
  }
  return name;
}

export function readWebhookName(fields: Map<string, YamlField>, parent: YamlField): string | undefined {
  return required(fields, 'name', parent, readName, DNS1123_LABEL_HINT);
}

/**
 * The webhook fields of `fields`, defaulted; undefined when any is invalid (each problem is
 * reported). `type` is undefined when it could not be told (an unknown rule kind): the fields
 * are still checked. Without `defaultRules`, `rules` is required. `mode` decides the default
 * failurePolicy (custom handlers decide for themselves: they count as enforcing). matchConditions
 * are compiled as kube-apiserver `target` compiles them (default: the current release).
 */
export function readWebhookSpec(
  fields: Map<string, YamlField>,
  parent: YamlField,
  type: WebhookType | undefined,
  defaultRules: readonly RuleWithOperations[] | undefined,
  mode: RuleMode = 'enforce',
  target?: KubernetesVersion,
): WebhookSpec | undefined {
  const name = readWebhookName(fields, parent);
  const rules = defaultRules
    ? optional(fields, 'rules', readRules, structuredClone([...defaultRules]))
    : required(fields, 'rules', parent, readRules, 'a list of { operations, apiGroups, apiVersions, resources }');
  const failurePolicy = optional(fields, 'failurePolicy', (f) => f.oneOf(FAILURE_POLICIES), defaultFailurePolicy(type, mode));
  const sideEffects = optional(fields, 'sideEffects', (f) => f.oneOf(SIDE_EFFECTS), WEBHOOK_DEFAULTS.sideEffects);
  const timeoutSeconds = optional(fields, 'timeoutSeconds', (f) => f.integer(1, 30), WEBHOOK_DEFAULTS.timeoutSeconds);
  const matchPolicy = optional(fields, 'matchPolicy', (f) => f.oneOf(MATCH_POLICIES), WEBHOOK_DEFAULTS.matchPolicy);
  const reinvocationField = fields.get('reinvocationPolicy');
  if (reinvocationField && type === 'validating') {
    reinvocationField.report('only mutating webhooks take reinvocationPolicy; this one is validating');
  }
  const reinvocationPolicy = optional(fields, 'reinvocationPolicy', (f) => f.oneOf(REINVOCATION_POLICIES), WEBHOOK_DEFAULTS.reinvocationPolicy);
  const namespaceSelectorField = fields.get('namespaceSelector');
  const namespaceSelector = namespaceSelectorField ? readLabelSelector(namespaceSelectorField) : undefined;
  const objectSelectorField = fields.get('objectSelector');
  const objectSelector = objectSelectorField ? readLabelSelector(objectSelectorField) : undefined;
  const matchConditionsField = fields.get('matchConditions');
  const matchConditions = matchConditionsField ? readMatchConditions(matchConditionsField, target, name) : undefined;

  if (!name || !type || !rules || !failurePolicy || !sideEffects || !timeoutSeconds || !matchPolicy || !reinvocationPolicy) return undefined;
  const spec: WebhookSpec = { name, type, rules, failurePolicy, sideEffects, timeoutSeconds, matchPolicy };
  if (type === 'mutating') spec.reinvocationPolicy = reinvocationPolicy;
  if (namespaceSelector) spec.namespaceSelector = namespaceSelector;
  if (objectSelector) spec.objectSelector = objectSelector;
  if (matchConditions && matchConditions.length > 0) spec.matchConditions = matchConditions;
  return spec;
}
