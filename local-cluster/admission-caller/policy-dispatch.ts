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

export const spec = (object: KubeObject): Json => (isRecord(object.spec) ? object.spec : {});
export const nameOf = (object: KubeObject): string => object.metadata?.name ?? '';

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

/** The policy and binding resources of one kind of admission policy. */
export interface PolicyResources {
  policies: 'validatingadmissionpolicies' | 'mutatingadmissionpolicies';
  bindings: 'validatingadmissionpolicybindings' | 'mutatingadmissionpolicybindings';
}

/** One policy, one of its bindings and one params object the binding selects, for the request in ctx. */
export interface PolicyInvocation {
  policy: KubeObject;
  binding: KubeObject;
  param: KubeObject | undefined;
  namespaceObject: KubeObject | undefined;
}

export interface InvocationVisitor {
  invoke(invocation: PolicyInvocation): void | Promise<void>;
  /** The binding's params could not be resolved (missing under `Deny`, an unknown paramKind). */
  paramsError(policy: KubeObject, binding: KubeObject, error: string): void;
  /** Every binding of the policy was visited. */
  policyDone?(policy: KubeObject): void;
}

/**
 * The generic policy dispatcher's walk, shared by both plugins: each policy this kube-apiserver
 * knows whose matchConstraints match, each of its bindings whose matchResources match, each params
 * object the binding's paramRef selects. Returns the Status that ends the request (a namespace
 * this kube-apiserver does not know), or undefined.
 */
export async function visitInvocations(ctx: PolicyContext, resources: PolicyResources, visitor: InvocationVisitor): Promise<StatusBody | undefined> {
  const isNamespace = ctx.request.resource.group === '' && ctx.request.resource.resource === 'namespaces';
  for (const policy of ctx.source.configurations(resources.policies)) {
    const matched = resourcesMatch(spec(policy).matchConstraints as MatchResources | undefined, ctx.request, ctx.target, ctx.source, false);
    if (typeof matched !== 'boolean') return matched;
    if (!matched) continue;
    const bindings = ctx.source.configurations(resources.bindings).filter((b) => spec(b).policyName === nameOf(policy));
    for (const binding of bindings) {
      const bindingSpec = spec(binding);
      const bindingMatched = resourcesMatch(bindingSpec.matchResources as MatchResources | undefined, ctx.request, ctx.target, ctx.source, true);
      if (typeof bindingMatched !== 'boolean') return bindingMatched;
      if (!bindingMatched) continue;
      const params = collectParams(ctx.source, spec(policy).paramKind, bindingSpec.paramRef, ctx.target.namespace);
      if ('error' in params) {
        visitor.paramsError(policy, binding, params.error);
        continue;
      }
      const namespaceObject = ctx.target.namespace !== '' && !isNamespace ? ctx.source.namespace(ctx.target.namespace) : undefined;
      for (const param of params.objects) await visitor.invoke({ policy, binding, param, namespaceObject });
    }
    visitor.policyDone?.(policy);
  }
  return undefined;
}

/** The published audit annotations of one policy's evaluations, gathered over its bindings. */
function annotationsOf(ctx: PolicyContext, denied: Denied[]): InvocationVisitor {
  const annotations = new Map<string, string[]>();
  return {
    invoke: ({ policy, binding, param, namespaceObject }) => {
      const result = evaluatePolicy(policy, {
        object: ctx.target.object,
        oldObject: ctx.target.oldObject,
        request: requestVariable(ctx.request, ctx.target.namespace, ctx.target.name),
        params: param,
        namespaceObject,
      });
      for (const decision of result.decisions) applyActions(ctx, nameOf(policy), binding, decision, denied);
      for (const { key, value } of result.annotations) {
        const values = annotations.get(key) ?? [];
        const cut = Buffer.from(value).subarray(0, MAX_AUDIT_VALUE_BYTES).toString();
        if (!values.includes(cut)) values.push(cut);
        annotations.set(key, values);
      }
    },
    paramsError: (policy, binding, error) => {
      if (spec(policy).failurePolicy !== 'Ignore') denied.push({ policy: nameOf(policy), binding: nameOf(binding), message: `failed to configure binding: ${error}`, reason: '' });
    },
    policyDone: (policy) => {
      for (const [key, values] of annotations) ctx.audit.set(`${nameOf(policy)}/${key}`, values.join(', '));
      annotations.clear();
    },
  };
}

/** The Status that ends the request, or undefined (warnings and audit annotations recorded in ctx). */
export async function runValidatingPolicies(ctx: PolicyContext): Promise<StatusBody | undefined> {
  const denied: Denied[] = [];
  const status = await visitInvocations(ctx, { policies: 'validatingadmissionpolicies', bindings: 'validatingadmissionpolicybindings' }, annotationsOf(ctx, denied));
  if (status) return status;
  const first = denied[0];
  return first === undefined ? undefined : denialStatus(ctx, first);
}
