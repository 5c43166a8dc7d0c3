/**
 * matchConditions as kube-apiserver's matcher decides them (contract 3.7): every condition is
 * evaluated (CEL: object, oldObject, request, authorizer); any false skips the webhook; an error
 * without a false is a 403 under failurePolicy Fail and a skip under Ignore. The double's own
 * code on the CEL library, independent of the server's (it is the oracle).
 */
import { Environment } from '@marcbachmann/cel-js';
import type { KubeObject } from '../fake-apiserver/index.js';
import { statusBody, type StatusBody } from '../fake-apiserver/status.js';
import { defaultOptions, DEFAULT_USER } from './review.js';
import type { AdmitRequest } from './types.js';

interface Condition {
  name?: string;
  expression?: string;
}

const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false })
  .registerVariable('object', 'dyn')
  .registerVariable('oldObject', 'dyn')
  .registerVariable('request', 'map')
  .registerVariable('authorizer', 'dyn');

/** Kubernetes' CEL sees JSON integers as int; the library wants bigints for that. */
function asCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(asCel);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asCel(v)]));
  return value;
}

/** The `request` variable: the AdmissionRequest's attributes as the apiserver builds them. */
function requestVariable(request: AdmitRequest, namespace: string, name: string): Record<string, unknown> {
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
  const activation = {
    object: asCel(object ?? null),
    oldObject: asCel(request.oldObject ?? null),
    request: asCel(requestVariable(request, coordinates.namespace, coordinates.name)),
    authorizer: null,
  };
  let firstError: string | undefined;
  for (const condition of conditions) {
    try {
      const result: unknown = env.evaluate(condition.expression ?? '', activation);
      if (result === false) return 'skip';
      if (result !== true) firstError ??= `matchCondition "${condition.name}" evaluated to ${typeof result}, not bool`;
    } catch (error) {
      firstError ??= `matchCondition "${condition.name}": ${(error as Error).message.split('\n')[0]}`;
    }
  }
  if (firstError === undefined) return 'call';
  if (hook.failurePolicy === 'Ignore') return 'skip';
  // [inferred] wording; the code is the contract's: 403 Forbidden, not governed by failurePolicy.
  return statusBody({ status: 'Failure', message: `admission webhook "${hook.name}" failed to evaluate match conditions: ${firstError}`, reason: 'Forbidden', code: 403 });
}
