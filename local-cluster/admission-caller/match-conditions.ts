/**
 * matchConditions as kube-apiserver's matcher decides them (contract 3.7): every condition is
 * evaluated (CEL: object, oldObject, request, authorizer); any false skips the webhook; an error
 * without a false is a 403 under failurePolicy Fail and a skip under Ignore. The double's own
 * code on its own CEL implementation (@bufbuild/cel, as its admission policies), not the
 * server's: the double is the oracle the server's matchConditions are judged by.
 */
import type { KubeObject } from '../fake-apiserver/index.js';
import { asCelInput, evaluateCel } from '../fake-apiserver/policy-cel.js';
import { statusBody, type StatusBody } from '../fake-apiserver/status.js';
import { defaultOptions, DEFAULT_USER } from './review.js';
import type { AdmitRequest } from './types.js';

interface Condition {
  name?: string;
  expression?: string;
}

/** The `request` variable: the AdmissionRequest's attributes as the apiserver builds them. */
export function requestVariable(request: AdmitRequest, namespace: string, name: string): Record<string, unknown> {
  const variable: Record<string, unknown> = {
    kind: request.kind,
    resource: request.resource,
    requestKind: request.kind,
    requestResource: request.resource,
    name,
    namespace,
    operation: request.operation,
    userInfo: request.userInfo ?? DEFAULT_USER,
    dryRun: request.dryRun ?? false,
    options: defaultOptions(request),
  };
  if (request.subResource) variable.subResource = request.subResource;
  return variable;
}

export type ConditionsOutcome = 'call' | 'skip' | StatusBody;

export function decideMatchConditions(
  hook: { name: string; failurePolicy?: string; matchConditions?: unknown[] },
  request: AdmitRequest,
  object: KubeObject | undefined,
  coordinates: { namespace: string; name: string },
): ConditionsOutcome {
  const conditions = (hook.matchConditions ?? []) as Condition[];
  if (conditions.length === 0) return 'call';
  const bindings = {
    object: asCelInput(object ?? null),
    oldObject: asCelInput(request.oldObject ?? null),
    request: asCelInput(requestVariable(request, coordinates.namespace, coordinates.name)),
    authorizer: null,
  };
  let firstError: string | undefined;
  for (const condition of conditions) {
    const outcome = evaluateCel(condition.expression ?? '', bindings);
    if ('error' in outcome) {
      firstError ??= `matchCondition "${condition.name}": ${outcome.error.split('\n')[0]}`;
      continue;
    }
    if (outcome.value === false) return 'skip';
    if (outcome.value !== true) firstError ??= `matchCondition "${condition.name}" evaluated to ${typeof outcome.value}, not bool`;
  }
  if (firstError === undefined) return 'call';
  if (hook.failurePolicy === 'Ignore') return 'skip';
  // [inferred] wording; the code is the contract's: 403 Forbidden, not governed by failurePolicy.
  return statusBody({ status: 'Failure', message: `admission webhook "${hook.name}" failed to evaluate match conditions: ${firstError}`, reason: 'Forbidden', code: 403 });
}
