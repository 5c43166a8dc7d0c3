/**
 * Which webhooks a request reaches, decided the way kube-apiserver decides it (local-cluster/CONTRACT.md 3.7):
 * rules (operation, group, version, resource and subresource, scope), namespaceSelector,
 * objectSelector, then matchConditions. For tools that try a policy without a cluster
 * (`evaluate`, `test`, `audit`); the server itself never needs it, kube-apiserver did it.
 */
import type { Authorize } from '../cel/library/authorizer.js';
import { evaluateMatchConditions } from '../cel/match-conditions.js';
import { NAMESPACE_NAME_LABEL } from './excluded-namespaces.js';
import { selectorMatches } from './label-selector.js';
import type { AdmissionRequest, KubeObject, RuleWithOperations, WebhookSpec } from '../admission/types.js';

/** Requests kube-apiserver never sends to a webhook: those on admission configuration itself. */
const EXEMPT_RESOURCES = new Set([
  'mutatingwebhookconfigurations',
  'validatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

/** Whether kube-apiserver would call a webhook for a request, and if not, why. */
export type MatchResult =
  | { matched: true }
  /** `condition`: a matchCondition decided it (false, or an error under failurePolicy Ignore), not the rules or selectors. */
  | { matched: false; why: string; condition?: 'false' | 'error' }
  /** A matchCondition errored under failurePolicy Fail: kube-apiserver rejects the request (403). */
  | { matched: 'error'; message: string };

function isNamespaceObject(request: AdmissionRequest): boolean {
  return request.resource.group === '' && request.resource.resource === 'namespaces';
}

const listed = (entries: readonly string[], value: string): boolean => entries.some((entry) => entry === '*' || entry === value);

/**
 * Whether one `resources` entry ("pods", "pods/status", "*\/*") covers `resource`/`subresource`;
 * what follows a second slash is ignored, as entry.split('/', 2) would. Without split: this runs
 * for every rule of every webhook on every object `evaluate` and `audit` read, and most entries
 * have no slash.
 */
function resourceEntryMatches(entry: string, resource: string, subresource: string): boolean {
  const slash = entry.indexOf('/');
  const named = slash < 0 ? entry : entry.slice(0, slash);
  if (named !== '*' && named !== resource) return false;
  if (slash < 0) return subresource === '';
  const end = entry.indexOf('/', slash + 1);
  const wanted = entry.slice(slash + 1, end < 0 ? undefined : end);
  return wanted === '*' || wanted === subresource;
}

function resourceMatches(entries: readonly string[], request: AdmissionRequest): boolean {
  const subresource = request.subResource ?? '';
  return entries.some((entry) => resourceEntryMatches(entry, request.resource.resource, subresource));
}

function scopeMatches(rule: RuleWithOperations, request: AdmissionRequest): boolean {
  const clusterScoped = isNamespaceObject(request) || !request.namespace;
  const scope = rule.scope ?? '*';
  return scope === '*' || (scope === 'Cluster') === clusterScoped;
}

export function ruleMatches(rule: RuleWithOperations, request: AdmissionRequest): boolean {
  return (
    listed(rule.operations, request.operation) &&
    listed(rule.apiGroups, request.resource.group) &&
    listed(rule.apiVersions, request.resource.version) &&
    resourceMatches(rule.resources, request) &&
    scopeMatches(rule, request)
  );
}

export const labelsOf = (object: KubeObject | null | undefined): Record<string, string> => object?.metadata?.labels ?? {};

/**
 * The labels the namespaceSelector is matched against: the Namespace object's when known,
 * always with `kubernetes.io/metadata.name` (kube-apiserver sets it on every namespace).
 */
export function namespaceLabels(request: AdmissionRequest, namespaceObject: KubeObject | null | undefined): Record<string, string> | undefined {
  if (isNamespaceObject(request)) return labelsOf(request.object ?? request.oldObject);
  if (!request.namespace) return undefined;
  return { ...labelsOf(namespaceObject), [NAMESPACE_NAME_LABEL]: request.namespace };
}

/** Whether kube-apiserver would call `webhook` for `request`, and if not, why. */
export function webhookMatches(webhook: WebhookSpec, request: AdmissionRequest, namespaceObject?: KubeObject | null, authorize?: Authorize): MatchResult {
  if (request.resource.group === 'admissionregistration.k8s.io' && EXEMPT_RESOURCES.has(request.resource.resource)) {
    return { matched: false, why: 'admission configuration is never sent to webhooks' };
  }
  if (!webhook.rules.some((rule) => ruleMatches(rule, request))) return { matched: false, why: 'no rule matches' };
  const nsLabels = namespaceLabels(request, namespaceObject);
  if (nsLabels && !selectorMatches(webhook.namespaceSelector, nsLabels)) return { matched: false, why: 'namespaceSelector does not match' };
  if (!objectSelectorMatches(webhook, request)) return { matched: false, why: 'objectSelector does not match' };
  return matchConditionsResult(webhook, request, authorize);
}

/** kube-apiserver's objectSelector: the new object's labels or the old one's match (absent: all). */
export function objectSelectorMatches(webhook: Pick<WebhookSpec, 'objectSelector'>, request: AdmissionRequest): boolean {
  if (!webhook.objectSelector) return true;
  return [request.object, request.oldObject].some((o) => o && selectorMatches(webhook.objectSelector, labelsOf(o)));
}

/** The webhook's matchConditions on `request`: any false skips; an error is the failurePolicy's (Fail: a 403). */
export function matchConditionsResult(webhook: Pick<WebhookSpec, 'matchConditions' | 'failurePolicy'>, request: AdmissionRequest, authorize?: Authorize): MatchResult {
  const conditions = evaluateMatchConditions(webhook.matchConditions, request, authorize);
  if ('error' in conditions) {
    if (webhook.failurePolicy === 'Ignore') return { matched: false, why: `matchCondition "${conditions.condition}" failed (${conditions.error}); skipped by failurePolicy Ignore`, condition: 'error' };
    return { matched: 'error', message: `matchCondition "${conditions.condition}" failed: ${conditions.error}` };
  }
  if (!conditions.match) return { matched: false, why: `matchCondition "${conditions.condition}" is false`, condition: 'false' };
  return { matched: true };
}
