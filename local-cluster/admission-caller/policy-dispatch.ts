/**
 * The ValidatingAdmissionPolicy admission plugin (k8s.io/apiserver policy/validating
 * dispatcher), which kube-apiserver runs after the mutating webhooks and before the validating
 * webhooks (AllOrderedPlugins in pkg/kubeapiserver/options/plugins.go). Each policy this
 * kube-apiserver knows that matches the request, each of its bindings that matches, each params
 * object the binding's paramRef selects: a failed validation goes to the binding's
 * validationActions (Deny: the request fails with the first denial; Warn: a Warning header;
 * Audit: the validation_failure audit annotation); a configuration error (params missing under
 * `Deny`, an unknown paramKind) fails the request under failurePolicy Fail.
 */
import type { AdmissionSource, KubeObject, StatusBody } from '../fake-apiserver/index.js';
import { isRecord } from '../fake-apiserver/objects.js';
import { policyDenial } from '../fake-apiserver/status.js';
import type { AuditAnnotations, WarningCollector } from './annotations.js';
import { requestVariable } from './match-conditions.js';
import { evaluatePolicy, type PolicyDecision } from './policy-evaluate.js';
import { collectParams } from './policy-params.js';
import { resourcesMatch, type MatchResources, type MatchTarget } from './policy-match.js';
import type { AdmitRequest } from './types.js';

type Json = Record<string, unknown>;

const REASON_CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, RequestEntityTooLarge: 413, Invalid: 422 };
const MAX_AUDIT_VALUE_BYTES = 10 * 1024;

interface Denied {
  policy: string;
  binding?: string;
  message: string;
  reason: string;
}

export interface PolicyContext {
  source: AdmissionSource;
  request: AdmitRequest;
  target: MatchTarget;
  warnings: WarningCollector;
  audit: AuditAnnotations;
}

const spec = (object: KubeObject): Json => (isRecord(object.spec) ? object.spec : {});
const nameOf = (object: KubeObject): string => object.metadata?.name ?? '';

function bindingsOf(source: AdmissionSource, policy: string): KubeObject[] {
  return source.configurations('validatingadmissionpolicybindings').filter((b) => spec(b).policyName === policy);
}

function denialStatus(ctx: PolicyContext, denied: Denied): StatusBody {
  const message = denied.binding === undefined
    ? `ValidatingAdmissionPolicy '${denied.policy}' denied request: ${denied.message}`
    : `ValidatingAdmissionPolicy '${denied.policy}' with binding '${denied.binding}' denied request: ${denied.message}`;
  const reason = denied.reason || 'Invalid';
  const name = ctx.target.name || (ctx.target.object?.metadata?.name ?? '');
  return policyDenial({ group: ctx.request.resource.group, resource: ctx.request.resource.resource }, name, message, reason, REASON_CODES[reason] ?? 422);
}

function applyActions(ctx: PolicyContext, policy: string, binding: KubeObject, decision: PolicyDecision, denied: Denied[]): void {
  const actions = Array.isArray(spec(binding).validationActions) ? (spec(binding).validationActions as string[]) : [];
  for (const action of actions) {
    if (action === 'Deny') denied.push({ policy, binding: nameOf(binding), message: decision.message, reason: decision.reason });
    if (action === 'Warn') ctx.warnings.add([`Validation failed for ValidatingAdmissionPolicy '${policy}' with binding '${nameOf(binding)}': ${decision.message}`]);
    if (action === 'Audit') {
      const value = [{ message: decision.message, policy, binding: nameOf(binding), expressionIndex: decision.index, validationActions: actions }];
      ctx.audit.set('validation.policy.admission.k8s.io/validation_failure', JSON.stringify(value));
    }
  }
}

/** The bindings of one policy; denials gathered into `denied`, annotations published per policy. */
function runPolicy(ctx: PolicyContext, policy: KubeObject, denied: Denied[]): StatusBody | undefined {
  const policyName = nameOf(policy);
  const fail = spec(policy).failurePolicy !== 'Ignore';
  const annotations = new Map<string, string[]>();
  for (const binding of bindingsOf(ctx.source, policyName)) {
    const bindingSpec = spec(binding);
    const matched = resourcesMatch(bindingSpec.matchResources as MatchResources | undefined, ctx.request, ctx.target, ctx.source, true);
    if (typeof matched !== 'boolean') return matched;
    if (!matched) continue;
    const params = collectParams(ctx.source, spec(policy).paramKind, bindingSpec.paramRef, ctx.target.namespace);
    if ('error' in params) {
      if (fail) denied.push({ policy: policyName, binding: nameOf(binding), message: `failed to configure binding: ${params.error}`, reason: '' });
      continue;
    }
    const isNamespace = ctx.request.resource.group === '' && ctx.request.resource.resource === 'namespaces';
    const namespaceObject = ctx.target.namespace !== '' && !isNamespace ? ctx.source.namespace(ctx.target.namespace) : undefined;
    for (const param of params.objects) {
      const result = evaluatePolicy(policy, {
        object: ctx.target.object,
        oldObject: ctx.target.oldObject,
        request: requestVariable(ctx.request, ctx.target.namespace, ctx.target.name),
        params: param,
        namespaceObject,
      });
      for (const decision of result.decisions) applyActions(ctx, policyName, binding, decision, denied);
      for (const { key, value } of result.annotations) {
        const values = annotations.get(key) ?? [];
        const cut = Buffer.from(value).subarray(0, MAX_AUDIT_VALUE_BYTES).toString();
        if (!values.includes(cut)) values.push(cut);
        annotations.set(key, values);
      }
    }
  }
  for (const [key, values] of annotations) ctx.audit.set(`${policyName}/${key}`, values.join(', '));
  return undefined;
}

/** The Status that ends the request, or undefined (warnings and audit annotations recorded in ctx). */
export function runValidatingPolicies(ctx: PolicyContext): StatusBody | undefined {
  const denied: Denied[] = [];
  for (const policy of ctx.source.configurations('validatingadmissionpolicies')) {
    const matched = resourcesMatch(spec(policy).matchConstraints as MatchResources | undefined, ctx.request, ctx.target, ctx.source, false);
    if (typeof matched !== 'boolean') return matched;
    if (!matched) continue;
    const status = runPolicy(ctx, policy, denied);
    if (status) return status;
  }
  const first = denied[0];
  return first === undefined ? undefined : denialStatus(ctx, first);
}
