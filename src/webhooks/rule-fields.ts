import type { RuleOperation, RuleWithOperations } from '../admission/types.js';
import { isMap, type Node } from 'yaml';
import { required, YamlField } from '../util/yaml-field.js';

const OPERATIONS: readonly RuleOperation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*'];
const SCOPES = ['Cluster', 'Namespaced', '*'] as const;

/** `*` matches everything, so listing it next to anything else is a mistake kube-apiserver refuses. */
function checkWildcardAlone(field: YamlField, values: readonly string[], wildcard: string): void {
  if (values.includes(wildcard) && values.length > 1) field.report(`"${wildcard}" must be the only entry when present`);
}

function readOperations(field: YamlField): RuleOperation[] | undefined {
  const values = field.stringList((value) =>
    (OPERATIONS as readonly string[]).includes(value) ? undefined : `unsupported operation "${value}"; use ${OPERATIONS.join(', ')}`,
  );
  if (!values) return undefined;
  if (values.length === 0) field.report(`must list at least one of ${OPERATIONS.join(', ')}`);
  checkWildcardAlone(field, values, '*');
  return values as RuleOperation[];
}

function readNonEmptyEntries(field: YamlField, what: string, allowEmptyEntry: boolean): string[] | undefined {
  const values = field.stringList((value) => (value === '' && !allowEmptyEntry ? `${what} must not be empty` : undefined));
  if (!values) return undefined;
  if (values.length === 0) field.report(`must list at least one ${what} ("*" for all)`);
  return values;
}

function readRule(field: YamlField, extraFields: readonly string[] = []): RuleWithOperations | undefined {
  const fields = field.map(['operations', 'apiGroups', 'apiVersions', 'resources', 'scope', ...extraFields]);
  if (!fields) return undefined;
  const operations = required(fields, 'operations', field, readOperations, `a list of ${OPERATIONS.join(', ')}`);
  const apiGroups = required(fields, 'apiGroups', field, (f) => readNonEmptyEntries(f, 'API group', true), 'a list of API groups, "" for the core group');
  const apiVersions = required(fields, 'apiVersions', field, (f) => readNonEmptyEntries(f, 'API version', false), 'a list of API versions such as v1');
  const resources = required(fields, 'resources', field, (f) => readNonEmptyEntries(f, 'resource', false), 'a list of resources such as pods');
  const scopeField = fields.get('scope');
  const scope = scopeField?.oneOf(SCOPES);
  if (apiGroups) checkWildcardAlone(fields.get('apiGroups')!, apiGroups, '*');
  if (apiVersions) checkWildcardAlone(fields.get('apiVersions')!, apiVersions, '*');
  if (resources) checkWildcardAlone(fields.get('resources')!, resources, '*/*');
  if (!operations || !apiGroups || !apiVersions || !resources) return undefined;
  const rule: RuleWithOperations = { operations, apiGroups, apiVersions, resources };
  if (scope) rule.scope = scope;
  return rule;
}

/** A webhook's `rules`: which operations on which resources kube-apiserver sends it. */
export function readRules(field: YamlField): RuleWithOperations[] | undefined {
  const items = field.list();
  if (!items) return undefined;
  if (items.length === 0) field.report('must list at least one rule; a webhook without rules is never called');
  const rules = items.map((item) => readRule(item));
  return rules.every((rule) => rule !== undefined) ? (rules as RuleWithOperations[]) : undefined;
}

/** A ValidatingAdmissionPolicy's NamedRuleWithOperations: a rule, and the object names it is limited to (none: all). */
export interface NamedRule {
  rule: RuleWithOperations;
  resourceNames: string[];
}

/** A list of rules that may each name objects (`resourceNames`), as excludeResourceRules. */
export function readNamedRules(field: YamlField): NamedRule[] | undefined {
  const items = field.list();
  if (!items) return undefined;
  const named = items.map((item): NamedRule | undefined => {
    const rule = readRule(item, ['resourceNames']);
    // readRule reported any unknown field already; only resourceNames is read here.
    const pair = isMap(item.node) ? item.node.items.find((p) => (p.key as { value?: unknown } | null)?.value === 'resourceNames') : undefined;
    const namesField = pair?.value ? new YamlField(item.problems, item.doc, pair.value as Node, `${item.path}.resourceNames`) : undefined;
    const resourceNames = namesField ? namesField.stringList(() => undefined) : [];
    return rule && resourceNames ? { rule, resourceNames } : undefined;
  });
  return named.every((n) => n !== undefined) ? (named as NamedRule[]) : undefined;
}
