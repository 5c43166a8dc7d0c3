/**
 * Validation of ValidatingAdmissionPolicy, MutatingAdmissionPolicy and their bindings, after
 * pkg/apis/admissionregistration/validation/validation.go (texts and field paths as there,
 * `matchResouces` of the validating binding included; the mutating binding spells it
 * `matchResources`). A mutating policy may not match DELETE (supportedMutatingOperations), needs
 * mutations, each of the patchType it names, and a reinvocationPolicy (no default). CEL is compiled by the double's own library
 * (policy-cel.ts): a parse error is `compilation failed: ERROR: <input>:line:col: ...`; the
 * rest of cel-go's text differs. Not modelled: the cost estimate, type checking at admission
 * time (the status controller reports types), stored-expression ratcheting.
 */
import { duplicate, forbiddenField, invalidValue, notSupported, required, tooMany, type FieldError } from './field-errors.js';
import { validateLabelSelector, type LabelSelector } from './label-selector.js';
import { validateObjectMeta } from './meta-validation.js';
import { isDns1035Label, isDns1123Subdomain, isQualifiedName } from './names.js';
import { isRecord, type KubeObject } from './objects.js';
import { compileError } from './policy-cel.js';
import { validateRule } from './webhook-validation.js';

type Json = Record<string, unknown>;

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const ACTIONS = ['Audit', 'Deny', 'Warn'];
const MUTATING_OPERATIONS = ['*', 'CONNECT', 'CREATE', 'UPDATE'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'];
const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_VALUE_EXPRESSION_BYTES = 5 * 1024;
const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

const rec = (value: unknown): Json => (isRecord(value) ? value : {});
const records = (value: unknown): Json[] => (Array.isArray(value) ? value.map(rec) : []);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** path.ValidatePathSegmentName (prefix false). */
function pathSegmentErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

function celErrors(field: string, expression: string): FieldError[] {
  const error = compileError(expression);
  return error === undefined ? [] : [invalidValue(field, expression, `compilation failed: ERROR: ${error}`)];
}

function validateMatchResources(match: Json, field: string): FieldError[] {
  const errors: FieldError[] = [];
  if (match.matchPolicy === undefined || match.matchPolicy === null) errors.push(required(`${field}.matchPolicy`));
  else if (!MATCH_POLICIES.includes(String(match.matchPolicy))) errors.push(notSupported(`${field}.matchPolicy`, match.matchPolicy, MATCH_POLICIES));
  for (const selector of ['namespaceSelector', 'objectSelector']) {
    if (!isRecord(match[selector])) errors.push(required(`${field}.${selector}`));
    else errors.push(...validateLabelSelector(match[selector] as LabelSelector, `${field}.${selector}`, { allowInvalidLabelValue: false }));
  }
  for (const list of ['resourceRules', 'excludeResourceRules']) {
    records(match[list]).forEach((rule, index) => {
      const path = `${field}.${list}[${index}]`;
      const seen = new Set<string>();
      (Array.isArray(rule.resourceNames) ? rule.resourceNames.map(String) : []).forEach((name, i) => {
        for (const message of pathSegmentErrors(name)) errors.push(invalidValue(`${path}.resourceNames[${i}]`, name, message));
        if (seen.has(name)) errors.push(duplicate(`${path}.resourceNames[${i}]`, name));
        seen.add(name);
      });
      errors.push(...validateRule(rule, path));
    });
  }
  return errors;
}

function validateParamKind(paramKind: Json, field: string): FieldError[] {
  const errors: FieldError[] = [];
  const apiVersion = text(paramKind.apiVersion);
  if (apiVersion === '') {
    errors.push(required(`${field}.apiVersion`));
  } else if ((apiVersion.match(/\//g) ?? []).length > 1) {
    errors.push(invalidValue(`${field}.apiVersion`, apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
  } else if (apiVersion !== '/') {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    const groupErrors = group ? isDns1123Subdomain(group) : [];
    if (groupErrors.length > 0) errors.push(invalidValue(`${field}.apiVersion`, group, groupErrors.join(',')));
    if (!version) errors.push(invalidValue(`${field}.apiVersion`, apiVersion, 'version must be specified'));
    else if (isDns1035Label(version).length > 0) errors.push(invalidValue(`${field}.apiVersion`, version, isDns1035Label(version).join(',')));
  }
  const kind = text(paramKind.kind);
  if (kind === '') errors.push(required(`${field}.kind`));
  else if (isDns1035Label(kind.toLowerCase()).length > 0) {
    errors.push(invalidValue(`${field}.kind`, kind, `may have mixed case, but should otherwise match: ${isDns1035Label(kind.toLowerCase()).join(',')}`));
  }
  return errors;
}

function validateMatchConditions(conditions: Json[], field: string): FieldError[] {
  const errors: FieldError[] = conditions.length > 64 ? [tooMany(field, conditions.length, 64)] : [];
  const names = new Set<string>();
  conditions.forEach((condition, index) => {
    const path = `${field}[${index}]`;
    const expression = text(condition.expression).trim();
    if (expression === '') errors.push(required(`${path}.expression`));
    else errors.push(...celErrors(`${path}.expression`, expression));
    const name = text(condition.name);
    if (name === '') errors.push(required(`${path}.name`));
    else for (const message of isQualifiedName(name)) errors.push(invalidValue(`${path}.name`, name, message));
    if (name !== '') {
      if (names.has(name)) errors.push(duplicate(`${path}.name`, name));
      names.add(name);
    }
  });
  return errors;
}

function validateVariable(variable: Json, field: string): FieldError[] {
  const errors: FieldError[] = [];
  const name = text(variable.name);
  if (name.trim() === '') errors.push(required(`${field}.name`, 'name is not specified'));
  else if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) || CEL_RESERVED.has(name)) errors.push(invalidValue(`${field}.name`, name, 'name is not a valid CEL identifier'));
  const expression = text(variable.expression);
  if (expression.trim() === '') errors.push(required(`${field}.expression`, 'expression is not specified'));
  else errors.push(...celErrors(`${field}.expression`, expression));
  return errors;
}

function validateValidation(validation: Json, field: string): FieldError[] {
  const errors: FieldError[] = [];
  const expression = text(validation.expression);
  if (expression.trim() === '') errors.push(required(`${field}.expression`, 'expression is not specified'));
  else errors.push(...celErrors(`${field}.expression`, expression));
  const messageExpression = text(validation.messageExpression);
  if (messageExpression.length > 0 && messageExpression.trim() === '') {
    errors.push(invalidValue(`${field}.messageExpression`, messageExpression, 'must be non-empty if specified'));
  } else if (messageExpression.trim() !== '') {
    errors.push(...celErrors(`${field}.messageExpression`, messageExpression));
  }
  const message = text(validation.message);
  if (message.length > 0 && message.trim() === '') errors.push(invalidValue(`${field}.message`, message, 'message must be non-empty if specified'));
  else if (/[\n\r]/.test(message.trim())) errors.push(invalidValue(`${field}.message`, message, 'message must not contain line breaks'));
  if (validation.reason !== undefined && validation.reason !== null && !REASONS.includes(String(validation.reason))) {
    errors.push(notSupported(`${field}.reason`, validation.reason, REASONS));
  }
  return errors;
}

function validateAuditAnnotation(annotation: Json, policyName: string, field: string): FieldError[] {
  const errors: FieldError[] = [];
  const key = text(annotation.key);
  if (policyName !== '') {
    for (const message of isQualifiedName(`${policyName}/${key}`)) errors.push(invalidValue(`${field}.key`, `${policyName}/${key}`, message));
  } else {
    errors.push(invalidValue(`${field}.key`, key, 'requires metadata.name be non-empty'));
  }
  const value = text(annotation.valueExpression).trim();
  if (value === '') errors.push(required(`${field}.valueExpression`, 'valueExpression is not specified'));
  else if (Buffer.byteLength(value) > MAX_VALUE_EXPRESSION_BYTES) errors.push(required(`${field}.valueExpression`, `must not exceed ${MAX_VALUE_EXPRESSION_BYTES} bytes in length`));
  else errors.push(...celErrors(`${field}.valueExpression`, text(annotation.valueExpression)));
  return errors;
}

/** A mutation applies to CREATE and UPDATE (and CONNECT) only: no index in the path, as kube-apiserver writes it. */
function mutableOperations(match: Json, field: string): FieldError[] {
  return records(match.resourceRules).flatMap((rule) =>
    (Array.isArray(rule.operations) ? rule.operations.map(String) : []).filter((op) => !MUTATING_OPERATIONS.includes(op)).map((op) => notSupported(field, op, MUTATING_OPERATIONS)),
  );
}

/** What both kinds of policy check alike: failurePolicy, paramKind, matchConstraints, matchConditions, variables. */
function validateCommonPolicySpec(spec: Json, mutating: boolean): FieldError[] {
  const errors: FieldError[] = [];
  if (spec.failurePolicy === undefined || spec.failurePolicy === null) errors.push(required('spec.failurePolicy'));
  else if (!FAILURE_POLICIES.includes(String(spec.failurePolicy))) errors.push(notSupported('spec.failurePolicy', spec.failurePolicy, FAILURE_POLICIES));
  if (isRecord(spec.paramKind)) errors.push(...validateParamKind(spec.paramKind, 'spec.paramKind'));
  if (!isRecord(spec.matchConstraints)) {
    errors.push(required('spec.matchConstraints'));
  } else {
    errors.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints'));
    if (records(spec.matchConstraints.resourceRules).length === 0) errors.push(required('spec.matchConstraints.resourceRules'));
    if (mutating) errors.push(...mutableOperations(spec.matchConstraints, 'spec.matchConstraints.resourceRules.operations'));
  }
  errors.push(...validateMatchConditions(records(spec.matchConditions), 'spec.matchConditions'));
  records(spec.variables).forEach((variable, index) => errors.push(...validateVariable(variable, `spec.variables[${index}]`)));
  return errors;
}

function validatePolicySpec(spec: Json, policyName: string): FieldError[] {
  const errors = validateCommonPolicySpec(spec, false);
  const validations = records(spec.validations);
  const annotations = records(spec.auditAnnotations);
  if (validations.length === 0 && annotations.length === 0) {
    const detail = 'validations or auditAnnotations must contain at least one item';
    return [...errors, required('spec.validations', detail), required('spec.auditAnnotations', detail)];
  }
  validations.forEach((validation, index) => errors.push(...validateValidation(validation, `spec.validations[${index}]`)));
  if (annotations.length > MAX_AUDIT_ANNOTATIONS) {
    errors.push(invalidValue('spec.auditAnnotations', annotations, `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`));
  }
  const keys = new Set<string>();
  annotations.forEach((annotation, index) => {
    const field = `spec.auditAnnotations[${index}]`;
    errors.push(...validateAuditAnnotation(annotation, policyName, field));
    if (keys.has(text(annotation.key))) errors.push(duplicate(`${field}.key`, annotation.key));
    keys.add(text(annotation.key));
  });
  return errors;
}

/** validateMutation: the patchType union, the named member's expression compiled, the other member absent. */
function validateMutation(mutation: Json, field: string): FieldError[] {
  const patchType = text(mutation.patchType);
  if (patchType === '') return [required(`${field}.patchType`)];
  if (!PATCH_TYPES.includes(patchType)) return [notSupported(`${field}.patchType`, patchType, PATCH_TYPES)];
  const [member, other] = patchType === 'JSONPatch' ? ['jsonPatch', 'applyConfiguration'] : ['applyConfiguration', 'jsonPatch'];
  const errors: FieldError[] = [];
  if (!isRecord(mutation[member])) errors.push(required(`${field}.${member}`, `must be specified when patchType is ${patchType}`));
  else {
    const expression = text(mutation[member].expression).trim();
    if (expression === '') errors.push(required(`${field}.${member}.expression`));
    else errors.push(...celErrors(`${field}.${member}.expression`, expression));
  }
  if (mutation[other] !== undefined && mutation[other] !== null) errors.push(invalidValue(`${field}.${other}`, `{${other}}`, `must not be specified when patchType is ${patchType}`));
  return errors;
}

export function validateMutatingAdmissionPolicy(object: KubeObject): FieldError[] {
  const errors = validateObjectMeta(object.metadata ?? {}, 'subdomain');
  const spec = rec(object.spec);
  errors.push(...validateCommonPolicySpec(spec, true));
  const mutations = records(spec.mutations);
  if (mutations.length === 0) errors.push(required('spec.mutations', 'mutations must contain at least one item'));
  mutations.forEach((mutation, index) => errors.push(...validateMutation(mutation, `spec.mutations[${index}]`)));
  const reinvocation = text(spec.reinvocationPolicy);
  if (reinvocation === '') errors.push(required('spec.reinvocationPolicy'));
  else if (!REINVOCATION_POLICIES.includes(reinvocation)) errors.push(notSupported('spec.reinvocationPolicy', reinvocation, REINVOCATION_POLICIES));
  return errors;
}

export function validateAdmissionPolicy(object: KubeObject): FieldError[] {
  const errors = validateObjectMeta(object.metadata ?? {}, 'subdomain');
  return [...errors, ...validatePolicySpec(rec(object.spec), object.metadata?.name ?? '')];
}

function validateParamRef(paramRef: Json, field: string): FieldError[] {
  const errors: FieldError[] = [];
  const name = text(paramRef.name);
  const hasSelector = isRecord(paramRef.selector);
  if (name !== '') {
    for (const message of pathSegmentErrors(name)) errors.push(invalidValue(`${field}.name`, name, message));
    if (hasSelector) errors.push(forbiddenField(`${field}.name`, 'name and selector are mutually exclusive'));
  }
  if (hasSelector) {
    errors.push(...validateLabelSelector(paramRef.selector as LabelSelector, `${field}.selector`, { allowInvalidLabelValue: false }));
    if (name !== '') errors.push(forbiddenField(`${field}.selector`, 'name and selector are mutually exclusive'));
  }
  if (name === '' && !hasSelector) errors.push(required(field, 'one of name or selector must be specified'));
  const action = text(paramRef.parameterNotFoundAction);
  if (action === '') errors.push(required(`${field}.parameterNotFoundAction`));
  else if (action !== 'Deny' && action !== 'Allow') errors.push(notSupported(`${field}.parameterNotFoundAction`, action, ['Deny', 'Allow']));
  return errors;
}

function validateValidationActions(value: unknown, field: string): FieldError[] {
  const actions = Array.isArray(value) ? value.map(String) : [];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  actions.forEach((action, index) => {
    if (!ACTIONS.includes(action)) errors.push(notSupported(`${field}[${index}]`, action, ACTIONS));
    if (seen.has(action)) errors.push(duplicate(`${field}[${index}]`, action));
    seen.add(action);
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errors.push(invalidValue(field, actions, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
  }
  if (seen.size === 0) errors.push(required(field, 'at least one validation action is required'));
  return errors;
}

/** What both kinds of binding check alike: metadata, policyName, paramRef. */
function validateCommonBinding(object: KubeObject): FieldError[] {
  const errors = validateObjectMeta(object.metadata ?? {}, 'subdomain');
  const spec = rec(object.spec);
  const policyName = text(spec.policyName);
  if (policyName === '') errors.push(required('spec.policyName'));
  else for (const message of isDns1123Subdomain(policyName)) errors.push(invalidValue('spec.policyName', policyName, message));
  if (isRecord(spec.paramRef)) errors.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  return errors;
}

export function validateAdmissionPolicyBinding(object: KubeObject): FieldError[] {
  const errors = validateCommonBinding(object);
  const spec = rec(object.spec);
  // "matchResouces": kube-apiserver's own spelling of this path.
  if (isRecord(spec.matchResources)) errors.push(...validateMatchResources(spec.matchResources, 'spec.matchResouces'));
  errors.push(...validateValidationActions(spec.validationActions, 'spec.validationActions'));
  return errors;
}

export function validateMutatingAdmissionPolicyBinding(object: KubeObject): FieldError[] {
  const errors = validateCommonBinding(object);
  const spec = rec(object.spec);
  if (isRecord(spec.matchResources)) {
    errors.push(...validateMatchResources(spec.matchResources, 'spec.matchResources'));
    errors.push(...mutableOperations(spec.matchResources, 'spec.matchResources.resourceRules.operations'));
  }
  return errors;
}
