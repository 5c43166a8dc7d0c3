/**
 * Which webhooks a request reaches (contract 3.7): rules (operation, group, version, resource,
 * subresource, scope), namespaceSelector, objectSelector and matchConditions (CEL). matchPolicy Equivalent is treated as
 * Exact: the double knows no conversions.
 */
import { isEmptySelector, selectorMatches, type LabelSelector } from '../fake-apiserver/label-selector.js';
import { notFound, type StatusBody } from '../fake-apiserver/status.js';
import type { AdmissionSource, KubeObject } from '../fake-apiserver/index.js';
import { decideMatchConditions } from './match-conditions.js';
import type { AdmitRequest } from './types.js';

export interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

export interface Webhook {
  name: string;
  clientConfig: { url?: string; service?: { name: string; namespace: string; path?: string; port?: number }; caBundle?: string };
  rules?: Rule[];
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: string;
  matchConditions?: unknown[];
}

const wildcardOr = (allowed: string[] | undefined, value: string): boolean =>
  (allowed ?? []).some((entry) => entry === '*' || entry === value);

function scopeMatches(rule: Rule, request: AdmitRequest, namespace: string): boolean {
  const isNamespaceObject = request.resource.group === '' && request.resource.resource === 'namespaces';
  switch (rule.scope ?? '*') {
    case '*':
      return true;
    case 'Namespaced':
      return !isNamespaceObject && namespace !== '';
    case 'Cluster':
      return isNamespaceObject || namespace === '';
    default:
      return false;
  }
}

function resourceMatches(rule: Rule, request: AdmitRequest): boolean {
  const sub = request.subResource ?? '';
  return (rule.resources ?? []).some((entry) => {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const ruleSub = slash < 0 ? '' : entry.slice(slash + 1);
    return (res === '*' || res === request.resource.resource) && (ruleSub === '*' || ruleSub === sub);
  });
}

export function ruleMatches(rule: Rule, request: AdmitRequest, namespace: string): boolean {
  return (
    scopeMatches(rule, request, namespace) &&
    wildcardOr(rule.operations, request.operation) &&
    wildcardOr(rule.apiGroups, request.resource.group) &&
    wildcardOr(rule.apiVersions, request.resource.version) &&
    resourceMatches(rule, request)
  );
}

const labelsOf = (object: KubeObject | undefined): Record<string, string> => object?.metadata?.labels ?? {};

/**
 * true/false, or the 404 a missing namespace produces (not governed by failurePolicy). A
 * Namespace being created or updated is judged by its own labels as the request has them now
 * (`object`); any other request by the namespace as this kube-apiserver knows it.
 */
export function namespaceSelectorMatches(
  hook: Webhook,
  request: AdmitRequest,
  namespace: string,
  source: Pick<AdmissionSource, 'namespace'>,
  object: KubeObject | undefined = request.object,
): boolean | StatusBody {
  const isNamespaceObject = request.resource.group === '' && request.resource.resource === 'namespaces';
  if (namespace === '' && !isNamespaceObject) return true;
  if (isEmptySelector(hook.namespaceSelector)) return true;
  let labels: Record<string, string>;
  const ownLabels = isNamespaceObject && !request.subResource && (request.operation === 'CREATE' || request.operation === 'UPDATE');
  if (ownLabels && object) {
    labels = labelsOf(object);
  } else {
    const stored = source.namespace(namespace);
    if (!stored) return notFound({ group: '', resource: 'namespaces' }, namespace);
    labels = labelsOf(stored);
  }
  return selectorMatches(hook.namespaceSelector, labels);
}

/** The object as the phase sees it now (after earlier patches), or the old object, carries matching labels. */
export function objectSelectorMatches(hook: Webhook, object: KubeObject | undefined, oldObject: KubeObject | undefined): boolean {
  if (isEmptySelector(hook.objectSelector)) return true;
  const matchesObject = (candidate: KubeObject | undefined): boolean =>
    candidate !== undefined && candidate !== null && selectorMatches(hook.objectSelector, labelsOf(candidate));
  return matchesObject(object) || matchesObject(oldObject);
}

/** Webhook configurations themselves are never intercepted. */
export function isExemptResource(request: AdmitRequest): boolean {
  return (
    request.resource.group === 'admissionregistration.k8s.io' &&
    [
      'mutatingwebhookconfigurations',
      'validatingwebhookconfigurations',
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
      'mutatingadmissionpolicies',
      'mutatingadmissionpolicybindings',
    ].includes(request.resource.resource)
  );
}

export interface MatchedWebhook {
  configuration: string;
  hook: Webhook;
}

/** Every webhook of every configuration of `resource` this kube-apiserver knows: configurations by name, webhooks in listed order. */
export function configuredWebhooks(
  source: Pick<AdmissionSource, 'configurations'>,
  resource: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations',
): MatchedWebhook[] {
  return source.configurations(resource).flatMap((configuration) =>
    (Array.isArray(configuration.webhooks) ? (configuration.webhooks as Webhook[]) : []).map((hook) => ({ configuration: configuration.metadata?.name ?? '', hook })),
  );
}

/** What a phase matches against: the object as it is now (after earlier patches) and the request's coordinates. */
export interface MatchTarget {
  namespace: string;
  name: string;
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
}

/**
 * kube-apiserver's ShouldCallHook: rules, namespaceSelector, objectSelector, matchConditions. A
 * namespaceSelector on a missing namespace yields its 404, a matchCondition error under
 * failurePolicy Fail its 403.
 */
export function shouldCall(source: Pick<AdmissionSource, 'namespace'>, hook: Webhook, request: AdmitRequest, target: MatchTarget): boolean | StatusBody {
  if (!(hook.rules ?? []).some((rule) => ruleMatches(rule, request, target.namespace))) return false;
  const namespaceMatch = namespaceSelectorMatches(hook, request, target.namespace, source, target.object);
  if (typeof namespaceMatch !== 'boolean') return namespaceMatch;
  if (!namespaceMatch || !objectSelectorMatches(hook, target.object, target.oldObject)) return false;
  const conditions = decideMatchConditions(hook, request, target.object, { namespace: target.namespace, name: target.name });
  if (conditions === 'skip') return false;
  if (conditions !== 'call') return conditions;
  return true;
}

/** The webhooks of `resource` that the request reaches, all judged on the same object (the validating phase). */
export function matchingWebhooks(
  source: Pick<AdmissionSource, 'configurations' | 'namespace'>,
  resource: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations',
  request: AdmitRequest,
  target: MatchTarget,
): MatchedWebhook[] | StatusBody {
  const matched: MatchedWebhook[] = [];
  for (const invocation of configuredWebhooks(source, resource)) {
    const decision = shouldCall(source, invocation.hook, request, target);
    if (typeof decision !== 'boolean') return decision;
    if (decision) matched.push(invocation);
  }
  return matched;
}
