/**
 * The parts of a ValidatingAdmissionPolicy's matchConstraints that a webhook registration cannot
 * carry (kube-apiserver's webhook rules have neither): `resourceNames` and
 * `excludeResourceRules`. kube-apiserver calls the webhook for every request its rules match;
 * the rule then lets through, untouched, what these leave out, as matching.go decides it: a name
 * list limits a rule to objects of those names (a CREATE whose name kube-apiserver generates has
 * none yet, so it is not matched), and any exclude rule that matches excludes.
 */
import type { NamedRule } from './rule-fields.js';
import type { AdmissionRequest } from '../admission/types.js';
import { ruleMatches } from './webhook-match.js';

export interface ResourceFilter {
  /** When not empty, only requests on objects of these names are judged. */
  resourceNames: string[];
  excludeResourceRules: NamedRule[];
}

const named = (names: readonly string[], request: AdmissionRequest): boolean => names.length === 0 || names.includes(request.name ?? '');

/** Whether the rule judges `request`; false: it is let through untouched. */
export function resourceFilterMatches(filter: ResourceFilter, request: AdmissionRequest): boolean {
  if (!named(filter.resourceNames, request)) return false;
  return !filter.excludeResourceRules.some(({ rule, resourceNames }) => ruleMatches(rule, request) && named(resourceNames, request));
}
