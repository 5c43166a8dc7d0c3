/**
 * Validation of Mutating/ValidatingWebhookConfiguration (contract section 4, from
 * pkg/apis/admissionregistration/validation/validation.go), including update ratcheting (4.2).
 * matchConditions are compiled for the version the double claims to be (match-condition-cel.ts).
 */
import {
  duplicate,
  invalidValue,
  notSupported,
  required,
  tooMany,
  type FieldError,
} from './field-errors.js';
import { validateLabelSelector, selectorHasInvalidLabelValue, type LabelSelector } from './label-selector.js';
import { validateObjectMeta } from './meta-validation.js';
import { isDns1035Label, isDns1123Subdomain, isQualifiedName } from './names.js';
import { isRecord, type KubeObject } from './objects.js';
import { matchConditionProblem } from './match-condition-cel.js';
import { DEFAULT_VERSION } from './version-info.js';

const DEFAULT_MINOR = Number(DEFAULT_VERSION.split('.')[1]);

type Json = Record<string, unknown>;

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const NO_SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun'];
const ALL_SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];
const MAX_MATCH_CONDITIONS = 64;

interface Ratchet {
  allowInvalidSideEffects: boolean;
  requireRecognizedVersion: boolean;
  requireUniqueNames: boolean;
  allowInvalidLabelValue: boolean;
  oldMatchConditions: Map<string, string>;
  /** Every matchCondition expression of the stored object (any webhook): compiled as stored expressions. */
  storedExpressions: Set<string>;
  /** The minor version of the kube-apiserver the double claims to be. */
  minor: number;
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map((v) => String(v)) : []);
const hooksOf = (object: KubeObject | undefined): Json[] =>
  Array.isArray(object?.webhooks) ? object.webhooks.filter(isRecord) : [];

function validateFullyQualifiedName(field: string, name: string): FieldError[] {
  if (name === '') return [required(field)];
  const errors = isDns1123Subdomain(name);
  if (errors.length > 0) return [invalidValue(field, name, errors.join(','))];
  if (name.split('.').length < 3) {
    return [invalidValue(field, name, 'should be a domain with at least three segments separated by dots')];
  }
  return [];
}

function validateResources(resources: string[], field: string): FieldError[] {
  const errors: FieldError[] = [];
  if (resources.length === 0) errors.push(required(field));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let resourceWithoutSub = false;
  resources.forEach((entry, index) => {
    if (entry === '') {
      errors.push(required(`${field}[${index}]`));
      return;
    }
    if (entry === '*/*') doubleWildcard = true;
    if (entry === '*') singleWildcard = true;
    const slash = entry.indexOf('/');
    if (slash < 0) {
      // Mirrors the Go code: the last plain entry decides.
      resourceWithoutSub = entry !== '*';
      return;
    }
    const res = entry.slice(0, slash);
    const sub = entry.slice(slash + 1);
    if (withWildcardSub.has(res)) {
      errors.push(invalidValue(`${field}[${index}]`, entry, `if '${res}/*' is present, must not specify ${entry}`));
    }
    if (subWithWildcardRes.has(sub)) {
      errors.push(invalidValue(`${field}[${index}]`, entry, `if '*/${sub}' is present, must not specify ${entry}`));
    }
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) {
    errors.push(invalidValue(field, resources, "if '*/*' is present, must not specify other resources"));
  }
  if (singleWildcard && resourceWithoutSub) {
    errors.push(invalidValue(field, resources, "if '*' is present, must not specify other resources without subresources"));
  }
  return errors;
}

export function validateRule(rule: Json, field: string): FieldError[] {
  const errors: FieldError[] = [];
  const operations = strings(rule.operations);
  if (operations.length === 0) errors.push(required(`${field}.operations`));
  if (operations.length > 1 && operations.includes('*')) {
    errors.push(invalidValue(`${field}.operations`, operations, "if '*' is present, must not specify other operations"));
  }
  operations.forEach((operation, index) => {
    if (!OPERATIONS.includes(operation)) errors.push(notSupported(`${field}.operations[${index}]`, operation, OPERATIONS));
  });
  const groups = strings(rule.apiGroups);
  if (groups.length === 0) errors.push(required(`${field}.apiGroups`));
  if (groups.length > 1 && groups.includes('*')) {
    errors.push(invalidValue(`${field}.apiGroups`, groups, "if '*' is present, must not specify other API groups"));
  }
  const versions = strings(rule.apiVersions);
  if (versions.length === 0) errors.push(required(`${field}.apiVersions`));
  if (versions.length > 1 && versions.includes('*')) {
    errors.push(invalidValue(`${field}.apiVersions`, versions, "if '*' is present, must not specify other API versions"));
  }
  versions.forEach((version, index) => {
    if (version === '') errors.push(required(`${field}.apiVersions[${index}]`));
  });
  errors.push(...validateResources(strings(rule.resources), `${field}.resources`));
  if (rule.scope !== undefined && rule.scope !== null && !SCOPES.includes(String(rule.scope))) {
    errors.push(notSupported(`${field}.scope`, rule.scope, SCOPES));
  }
  return errors;
}

function validateUrl(field: string, text: string): FieldError[] {
  const form = '; desired format: https://host[/path]';
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    return [required(field, `url must be a valid URL: ${(error as Error).message}${form}`)];
  }
  const errors: FieldError[] = [];
  const scheme = url.protocol.replace(/:$/, '');
  if (scheme !== 'https') errors.push(invalidValue(field, scheme, `'https' is the only allowed URL scheme${form}`));
  if (url.host === '') errors.push(invalidValue(field, url.host, `host must be specified${form}`));
  if (url.username !== '' || url.password !== '') {
    const user = url.password === '' ? url.username : `${url.username}:${url.password}`;
    errors.push(invalidValue(field, user, 'user information is not permitted in the URL'));
  }
  if (text.includes('#')) errors.push(invalidValue(field, text.slice(text.indexOf('#') + 1), 'fragments are not permitted in the URL'));
  const query = text.includes('?') ? text.slice(text.indexOf('?') + 1).split('#')[0] ?? '' : '';
  if (query !== '') errors.push(invalidValue(field, query, 'query parameters are not permitted in the URL'));
  return errors;
}

function validateServicePath(field: string, path: string): FieldError[] {
  if (path === '' || path === '/') return [];
  if (path === '//') return [invalidValue(field, path, 'segment[0] may not be empty')];
  const errors: FieldError[] = [];
  if (!path.startsWith('/')) errors.push(invalidValue(field, path, "must start with a '/'"));
  let rest = path.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, index) => {
    if (step === '') {
      errors.push(invalidValue(field, path, `segment[${index}] may not be empty`));
      return;
    }
    for (const failure of isDns1123Subdomain(step)) errors.push(invalidValue(field, path, `segment[${index}]: ${failure}`));
  });
  return errors;
}

function validateService(field: string, service: Json): FieldError[] {
  const errors: FieldError[] = [];
  if (!service.name) errors.push(required(`${field}.name`, 'service name is required'));
  if (!service.namespace) errors.push(required(`${field}.namespace`, 'service namespace is required'));
  const port = Number(service.port ?? 443);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    errors.push(invalidValue(`${field}.port`, service.port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  if (typeof service.path === 'string') errors.push(...validateServicePath(`${field}.path`, service.path));
  return errors;
}

function validateClientConfig(field: string, clientConfig: unknown): FieldError[] {
  const config = isRecord(clientConfig) ? clientConfig : {};
  const hasUrl = config.url !== undefined && config.url !== null;
  const hasService = config.service !== undefined && config.service !== null;
  if (hasUrl === hasService) return [required(field, 'exactly one of url or service is required')];
  if (hasUrl) return validateUrl(`${field}.url`, String(config.url));
  return validateService(`${field}.service`, isRecord(config.service) ? config.service : {});
}

function validateMatchConditions(field: string, value: unknown, ratchet: Ratchet): FieldError[] {
  const conditions = Array.isArray(value) ? value.filter(isRecord) : [];
  const unchanged =
    conditions.length === ratchet.oldMatchConditions.size &&
    conditions.every((c) => ratchet.oldMatchConditions.get(String(c.name)) === String(c.expression));
  if (unchanged && conditions.length > 0) return [];
  const errors: FieldError[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS) errors.push(tooMany(field, conditions.length, MAX_MATCH_CONDITIONS));
  const seen = new Set<string>();
  conditions.forEach((condition, index) => {
    const name = typeof condition.name === 'string' ? condition.name : '';
    const path = `${field}[${index}]`;
    if (name === '') {
      errors.push(required(`${path}.name`));
    } else {
      for (const message of isQualifiedName(name)) errors.push(invalidValue(`${path}.name`, name, message));
      if (seen.has(name)) errors.push(duplicate(`${path}.name`, name));
      seen.add(name);
    }
    if (typeof condition.expression !== 'string' || condition.expression.trim() === '') {
      errors.push(required(`${path}.expression`));
    } else {
      const expression = condition.expression.trim();
      const problem = matchConditionProblem(expression, ratchet.minor, ratchet.storedExpressions.has(expression) ? 'stored' : 'new');
      if (problem !== undefined) errors.push(invalidValue(`${path}.expression`, expression, problem));
    }
  });
  return errors;
}

function validateWebhook(hook: Json, field: string, mutating: boolean, ratchet: Ratchet): FieldError[] {
  const errors = validateFullyQualifiedName(`${field}.name`, typeof hook.name === 'string' ? hook.name : '');
  const rules = Array.isArray(hook.rules) ? hook.rules : [];
  rules.forEach((rule, index) => errors.push(...validateRule(isRecord(rule) ? rule : {}, `${field}.rules[${index}]`)));
  if (hook.failurePolicy !== undefined && !FAILURE_POLICIES.includes(String(hook.failurePolicy))) {
    errors.push(notSupported(`${field}.failurePolicy`, hook.failurePolicy, FAILURE_POLICIES));
  }
  if (hook.matchPolicy !== undefined && !MATCH_POLICIES.includes(String(hook.matchPolicy))) {
    errors.push(notSupported(`${field}.matchPolicy`, hook.matchPolicy, MATCH_POLICIES));
  }
  if (mutating && hook.reinvocationPolicy !== undefined && !REINVOCATION_POLICIES.includes(String(hook.reinvocationPolicy))) {
    errors.push(notSupported(`${field}.reinvocationPolicy`, hook.reinvocationPolicy, REINVOCATION_POLICIES));
  }
  const sideEffectClasses = ratchet.allowInvalidSideEffects ? ALL_SIDE_EFFECT_CLASSES : NO_SIDE_EFFECT_CLASSES;
  if (hook.sideEffects === undefined || hook.sideEffects === null) {
    errors.push(required(`${field}.sideEffects`, `must specify one of ${NO_SIDE_EFFECT_CLASSES.join(', ')}`));
  } else if (!sideEffectClasses.includes(String(hook.sideEffects))) {
    errors.push(notSupported(`${field}.sideEffects`, hook.sideEffects, sideEffectClasses));
  }
  const timeout = hook.timeoutSeconds;
  if (timeout !== undefined && (typeof timeout !== 'number' || timeout < 1 || timeout > 30)) {
    errors.push(invalidValue(`${field}.timeoutSeconds`, timeout, 'the timeout value must be between 1 and 30 seconds'));
  }
  const selectorOptions = { allowInvalidLabelValue: ratchet.allowInvalidLabelValue };
  if (isRecord(hook.namespaceSelector)) {
    errors.push(...validateLabelSelector(hook.namespaceSelector as LabelSelector, `${field}.namespaceSelector`, selectorOptions));
  }
  if (isRecord(hook.objectSelector)) {
    errors.push(...validateLabelSelector(hook.objectSelector as LabelSelector, `${field}.objectSelector`, selectorOptions));
  }
  errors.push(...validateClientConfig(`${field}.clientConfig`, hook.clientConfig));
  if (hook.matchConditions !== undefined) {
    errors.push(...validateMatchConditions(`${field}.matchConditions`, hook.matchConditions, ratchet));
  }
  return errors;
}

function validateReviewVersions(field: string, value: unknown, requireRecognized: boolean): FieldError[] {
  const versions = strings(value);
  if (versions.length === 0) return [required(field, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  let recognized = false;
  versions.forEach((version, index) => {
    if (seen.has(version)) {
      errors.push(invalidValue(`${field}[${index}]`, version, 'duplicate version'));
      return;
    }
    seen.add(version);
    for (const message of isDns1035Label(version)) errors.push(invalidValue(`${field}[${index}]`, version, message));
    if (REVIEW_VERSIONS.includes(version)) recognized = true;
  });
  if (requireRecognized && !recognized) {
    errors.push(invalidValue(field, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  }
  return errors;
}

function ratchetFrom(old: KubeObject | undefined, hookIndex: number, minor: number): Ratchet {
  const oldHooks = hooksOf(old);
  if (old === undefined) {
    return {
      allowInvalidSideEffects: false,
      requireRecognizedVersion: true,
      requireUniqueNames: true,
      allowInvalidLabelValue: false,
      oldMatchConditions: new Map(),
      storedExpressions: new Set(),
      minor,
    };
  }
  const names = oldHooks.map((h) => String(h.name));
  const oldHook = oldHooks[hookIndex];
  const oldConditions = Array.isArray(oldHook?.matchConditions) ? oldHook.matchConditions.filter(isRecord) : [];
  return {
    allowInvalidSideEffects: !oldHooks.every((h) => NO_SIDE_EFFECT_CLASSES.includes(String(h.sideEffects))),
    requireRecognizedVersion: oldHooks.every((h) => strings(h.admissionReviewVersions).some((v) => REVIEW_VERSIONS.includes(v))),
    requireUniqueNames: new Set(names).size === names.length,
    allowInvalidLabelValue: oldHooks.some(
      (h) =>
        selectorHasInvalidLabelValue(h.namespaceSelector as LabelSelector | undefined) ||
        selectorHasInvalidLabelValue(h.objectSelector as LabelSelector | undefined),
    ),
    oldMatchConditions: new Map(oldConditions.map((c) => [String(c.name), String(c.expression)])),
    storedExpressions: new Set(oldHooks.flatMap((h) => (Array.isArray(h.matchConditions) ? h.matchConditions.filter(isRecord).map((c) => String(c.expression).trim()) : []))),
    minor,
  };
}

/**
 * All field errors of `object` (already defaulted); `old` is the stored object on update, `minor`
 * the minor version of the kube-apiserver the double claims to be.
 */
export function validateWebhookConfiguration(object: KubeObject, mutating: boolean, old?: KubeObject, minor = DEFAULT_MINOR): FieldError[] {
  const errors = validateObjectMeta(object.metadata ?? {}, 'subdomain');
  const seen = new Set<string>();
  const hooks = Array.isArray(object.webhooks) ? object.webhooks : [];
  hooks.forEach((raw, index) => {
    const hook = isRecord(raw) ? raw : {};
    const ratchet = ratchetFrom(old, index, minor);
    const field = `webhooks[${index}]`;
    errors.push(...validateWebhook(hook, field, mutating, ratchet));
    errors.push(...validateReviewVersions(`${field}.admissionReviewVersions`, hook.admissionReviewVersions, ratchet.requireRecognizedVersion));
    const name = typeof hook.name === 'string' ? hook.name : '';
    if (ratchet.requireUniqueNames && name !== '') {
      if (seen.has(name)) errors.push(duplicate(`${field}.name`, name));
      seen.add(name);
    }
  });
  return errors;
}

/** The release that turned the AdmissionWebhookMatchConditions feature gate on by default (beta). */
const MATCH_CONDITIONS_ON_BY_DEFAULT = 28;

/**
 * kube-apiserver's DropDisabledFields for webhook configurations: before 1.28 (the gate alpha and
 * off in 1.27, the field unknown before) matchConditions are dropped from a write, silently,
 * unless the stored object already uses them. A 422 it is not: the webhook is stored without its
 * conditions, matching more than its author meant.
 */
export function dropDisabledWebhookFields(object: KubeObject, old: KubeObject | undefined, minor: number): void {
  if (minor >= MATCH_CONDITIONS_ON_BY_DEFAULT) return;
  if (hooksOf(old).some((hook) => Array.isArray(hook.matchConditions) && hook.matchConditions.length > 0)) return;
  for (const hook of hooksOf(object)) delete hook.matchConditions;
}
