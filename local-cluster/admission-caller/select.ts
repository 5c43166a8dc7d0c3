/**
 * Which webhooks a request reaches (contract 3.7): rules (operation, group, version, resource,
 * subresource, scope), namespaceSelector, objectSelector and matchConditions (CEL). matchPolicy Equivalent is treated as
 * Exact: the double knows no conversions.
 */
import { isEmptySelector, selectorMatches, type LabelSelector } from '../fake-apiserver/label-selector.js';
import { notFound, type StatusBody } from '../fake-apiserver/status.js';
import type { KubeObject, ObjectStore } from '../fake-apiserver/index.js';
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

/** true/false, or the 404 a missing namespace produces (not governed by failurePolicy). */
export function namespaceSelectorMatches(
  hook: Webhook,
  request: AdmitRequest,
  namespace: string,
  store: ObjectStore,
): boolean | StatusBody {
  const isNamespaceObject = request.resource.group === '' && request.resource.resource === 'namespaces';
  if (namespace === '' && !isNamespaceObject) return true;
  if (isEmptySelector(hook.namespaceSelector)) return true;
  let labels: Record<string, string>;
  if (isNamespaceObject && (request.object ?? request.oldObject)) {
    labels = labelsOf(request.object ?? request.oldObject);
  } else {
    const stored = store.get('namespaces', undefined, namespace);
    if (!stored) return notFound({ group: '', resource: 'namespaces' }, namespace);
    labels = labelsOf(stored);
  }
  return selectorMatches(hook.namespaceSelector, labels);
}

export function objectSelectorMatches(hook: Webhook, request: AdmitRequest): boolean {
  if (isEmptySelector(hook.objectSelector)) return true;
  const matchesObject = (object: KubeObject | undefined): boolean =>
    object !== undefined && object !== null && selectorMatches(hook.objectSelector, labelsOf(object));
  return matchesObject(request.object) || matchesObject(request.oldObject);
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

/**
 * The webhooks of all configurations of `resource` that the request reaches, configurations by
 * name, webhooks in listed order. A namespaceSelector on a missing namespace yields its 404, a
 * matchCondition error under failurePolicy Fail its 403.
 */
export function matchingWebhooks(
  store: ObjectStore,
  resource: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations',
  request: AdmitRequest,
  namespace: string,
  /** The object as this phase sees it (validating: after mutation), and the request's name. */
  object: KubeObject | undefined = request.object,
  name = '',
): MatchedWebhook[] | StatusBody {
  const matched: MatchedWebhook[] = [];
  for (const configuration of store.list(resource)) {
    const hooks = Array.isArray(configuration.webhooks) ? (configuration.webhooks as Webhook[]) : [];
    for (const hook of hooks) {
      if (!(hook.rules ?? []).some((rule) => ruleMatches(rule, request, namespace))) continue;
      const namespaceMatch = namespaceSelectorMatches(hook, request, namespace, store);
      if (typeof namespaceMatch !== 'boolean') return namespaceMatch;
      if (!namespaceMatch || !objectSelectorMatches(hook, request)) continue;
      const conditions = decideMatchConditions(hook, request, object, { namespace, name });
      if (conditions === 'skip') continue;
      if (conditions !== 'call') return conditions;
      matched.push({ configuration: configuration.metadata?.name ?? '', hook });
    }
  }
  return matched;
}
