import type { PolicyEntry } from './policy.js';
import type { MatchCondition, RuleWithOperations } from './types.js';

/** A named rule as a ValidatingAdmissionPolicy writes it in matchConstraints. */
export interface NamedRuleWithOperations extends RuleWithOperations {
  resourceNames?: string[];
}

/**
 * What a `kind: cel` entry says beyond its webhook fields, as written (already checked and
 * compiled by the cel rule): the parts of a ValidatingAdmissionPolicy and its binding that
 * registration writes when the entry runs inside kube-apiserver.
 */
export interface NativeRuleSource {
  variables: Array<{ name: string; expression: string }>;
  validations: Array<{ expression: string; message?: string; messageExpression?: string; reason?: string }>;
  auditAnnotations: Array<{ key: string; valueExpression: string }>;
  /** Undefined: the entry's mode decides (enforce Deny, warn Warn, audit Audit). */
  validationActions?: Array<'Deny' | 'Warn' | 'Audit'>;
  /** The entry's `params`, whole. */
  params?: unknown;
  resourceNames?: string[];
  excludeResourceRules?: NamedRuleWithOperations[];
  matchConditions?: MatchCondition[];
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The params as a ConfigMap's string data, or undefined when they are shaped otherwise. */
export function configMapData(params: unknown): Record<string, string> | undefined {
  if (!isRecord(params) || !isRecord(params.data)) return undefined;
  const { data, apiVersion, kind, metadata, ...rest } = params;
  if (Object.keys(rest).length > 0 || (kind !== undefined && kind !== 'ConfigMap') || (apiVersion !== undefined && apiVersion !== 'v1') || (metadata !== undefined && !isRecord(metadata))) return undefined;
  return Object.values(data).every((v) => typeof v === 'string') ? (data as Record<string, string>) : undefined;
}

/**
 * What a mutating built-in says, as written (already checked by its rule), for the
 * MutatingAdmissionPolicy registration writes when the entry runs inside kube-apiserver.
 */
export type NativeMutationSource =
  | { kind: 'defaultLabels'; labels: Record<string, string>; annotations: Record<string, string> }
  | { kind: 'defaultResources'; requests: Partial<Record<'cpu' | 'memory', string>>; limits: Partial<Record<'cpu' | 'memory', string>> };

/**
 * Why an entry cannot run inside kube-apiserver as a ValidatingAdmissionPolicy or
 * MutatingAdmissionPolicy (empty: it can). cel rules have a validating native form, whose params
 * must be a ConfigMap's string data, since the binding's paramRef names a ConfigMap;
 * defaultLabels and defaultResources have a mutating one in mode enforce.
 */
export function nativeObstacles(entry: Pick<PolicyEntry, 'kind' | 'native' | 'nativeMutation'> & { mode?: PolicyEntry['mode'] }): string[] {
  if (entry.nativeMutation) {
    // warn and audit report what the rule would change without changing it: a policy can only change.
    return entry.mode === undefined || entry.mode === 'enforce' ? [] : [`mode ${entry.mode} reports what the rule would change without changing it: only the webhook can`];
  }
  if (!entry.native) return [`kind ${entry.kind} is built into this server: only its webhook runs it`];
  if (entry.native.params !== undefined && configMapData(entry.native.params) === undefined) {
    return ['params are not a ConfigMap\'s string data ({ data: { key: "value" } }): a native policy reads its params from a ConfigMap'];
  }
  return [];
}
