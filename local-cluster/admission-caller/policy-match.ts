/**
 * Which ValidatingAdmissionPolicies and bindings a request reaches (the policy matcher of
 * k8s.io/apiserver's policy/matching): resourceRules with resourceNames, excludeResourceRules,
 * namespaceSelector and objectSelector, the same rule and selector code as the webhooks.
 * matchPolicy Equivalent is treated as Exact: the double knows no conversions. A binding
 * without matchResources, or with no resourceRules, matches what its policy matches.
 */
import type { AdmissionSource, KubeObject, StatusBody } from '../fake-apiserver/index.js';
import type { LabelSelector } from '../fake-apiserver/label-selector.js';
import { namespaceSelectorMatches, objectSelectorMatches, ruleMatches, type Rule, type Webhook } from './select.js';
import type { AdmitRequest } from './types.js';

export interface NamedRule extends Rule {
  resourceNames?: string[];
}

export interface MatchResources {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  resourceRules?: NamedRule[];
  excludeResourceRules?: NamedRule[];
}

export interface MatchTarget {
  namespace: string;
  name: string;
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
}

function namedRuleMatches(rule: NamedRule, request: AdmitRequest, target: MatchTarget): boolean {
  const names = rule.resourceNames ?? [];
  return ruleMatches(rule, request, target.namespace) && (names.length === 0 || names.includes(target.name));
}

/** true/false, or the 404 of a namespace this kube-apiserver does not know. */
export function resourcesMatch(
  match: MatchResources | undefined,
  request: AdmitRequest,
  target: MatchTarget,
  source: Pick<AdmissionSource, 'namespace'>,
  emptyRulesMatchAll: boolean,
): boolean | StatusBody {
  if (match === undefined) return true;
  const rules = match.resourceRules ?? [];
  if (!(rules.length === 0 && emptyRulesMatchAll) && !rules.some((rule) => namedRuleMatches(rule, request, target))) return false;
  if ((match.excludeResourceRules ?? []).some((rule) => namedRuleMatches(rule, request, target))) return false;
  const selectors = { namespaceSelector: match.namespaceSelector, objectSelector: match.objectSelector } as Webhook;
  const namespaceMatch = namespaceSelectorMatches(selectors, request, target.namespace, source, target.object);
  if (namespaceMatch !== true) return namespaceMatch;
  return objectSelectorMatches(selectors, target.object, target.oldObject);
}
