import type { KubeObject } from '../admission/types.js';
import type { DiscoveredResource } from '../kube/discovery.js';
import type { DiscoveredKind, StoredObjectEvaluation } from '../kube/evaluation/evaluate-objects.js';
import type { ObjectOutcome } from '../kube/evaluation/simulate.js';
import { encodeResults, type KeptKind, type KeptObjects, type ObjectIdentity, type RuleTable } from './kept-objects.js';
import { resultsOf, type ReportedRule } from './results.js';

/** The kind every object listed from `target` is kept as. */
export function keptKindOf(target: DiscoveredResource): KeptKind {
  return { apiVersion: target.apiVersion, kind: target.kind, key: `${target.group}/${target.resource}` };
}

/** The resource `target` lists, as the evaluation path takes it. */
export function kindOf(target: DiscoveredResource): DiscoveredKind {
  return { resource: { group: target.group, version: target.version, resource: target.resource }, namespaced: target.namespaced };
}

/** An object's identity as listed or watched; undefined for one without a uid (never stored so). */
export function identityOf(object: KubeObject): ObjectIdentity | undefined {
  const metadata = object.metadata;
  if (!metadata?.uid || !metadata.name) return undefined;
  return { namespace: metadata.namespace ?? '', name: metadata.name, uid: metadata.uid, resourceVersion: metadata.resourceVersion ?? '' };
}

/** What judging one stored object needs: the one evaluation path, the reported rules and where results are kept. */
export interface AuditInputs {
  evaluation: StoredObjectEvaluation;
  reported: ReadonlyMap<string, ReportedRule>;
  rules: RuleTable;
  kept: KeptObjects;
}

/**
 * One stored object through the policy (the same path as `audit` and admission) and its results
 * kept; resolves with the outcome and whether its results changed. What `audit -o report` and the
 * server's background audit both do with every object they list.
 */
export async function auditObject(inputs: AuditInputs, target: DiscoveredResource, kind: KeptKind, object: KubeObject): Promise<{ outcome: ObjectOutcome; changed: boolean } | undefined> {
  const identity = identityOf(object);
  if (!identity) return undefined;
  const outcome = await inputs.evaluation.evaluate(object, kindOf(target));
  const changed = inputs.kept.set(kind, identity, encodeResults(resultsOf(outcome, inputs.reported), inputs.rules));
  return { outcome, changed };
}
