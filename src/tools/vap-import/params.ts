import type { KubeObject } from '../../policy/types.js';
import type { Manifest } from '../manifests.js';
import { selectorMatches } from '../../policy/label-selector.js';
import { describe, type BindingSpec, type PolicySpec, type Sourced } from './objects.js';
import type { ImportProblem } from './problems.js';

/** The params one entry is evaluated with: an object given in the input, or none (a policy without paramKind). */
export interface ResolvedParams {
  /** The params object (as kube-apiserver passes it to the expressions: the whole object); absent without paramKind. */
  object?: KubeObject;
  /** Added to the entry's name when a selector picks several. */
  suffix?: string;
}

/**
 * kube-apiserver evaluates a binding once per params object its paramRef picks (by name, or every
 * object its selector matches); the import writes one entry per such object found in the input.
 * What depends on the cluster at request time (params in the request's own namespace; params that
 * are not in the input) cannot be written down and is reported.
 */
export function resolveParams(policy: Sourced<PolicySpec>, binding: Sourced<BindingSpec>, others: readonly Manifest[], problems: ImportProblem[]): ResolvedParams[] | undefined {
  const paramKind = policy.spec.paramKind;
  const ref = binding.spec.paramRef;
  const where = describe(binding);
  const fail = (field: string, problem: string): undefined => void problems.push({ object: where, field, problem, effect: 'not imported' });
  if (!paramKind) {
    if (ref) problems.push({ object: where, field: 'spec.paramRef', problem: `the policy ${policy.name} has no paramKind, so kube-apiserver ignores the paramRef`, effect: 'left out' });
    return [{}];
  }
  if (!ref) return fail('spec.paramRef', `the policy ${policy.name} has paramKind ${paramKind.kind}, and the binding names no params`);
  // Required, with no default (admissionregistration v1 defaults no ParamRef field): kube-apiserver
  // refuses such a binding, so in the cluster it never runs and there is nothing to import.
  if (ref.parameterNotFoundAction === undefined) {
    return fail('spec.paramRef.parameterNotFoundAction', 'required (Deny or Allow): kube-apiserver refuses a binding whose paramRef leaves it out, so this binding never runs; set it and import again');
  }
  const ofKind = others.filter((m) => m.object.apiVersion === paramKind.apiVersion && m.object.kind === paramKind.kind);
  const candidates = ofKind.filter((m) => ref.namespace === undefined || m.object.metadata?.namespace === ref.namespace);
  const picked = ref.name !== undefined ? candidates.filter((m) => m.object.metadata?.name === ref.name) : candidates.filter((m) => selectorMatches(ref.selector ?? {}, m.object.metadata?.labels ?? {}));
  if (picked.length === 0) {
    const which = ref.name !== undefined ? `${paramKind.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}` : `no ${paramKind.kind} its selector matches`;
    const action = ref.parameterNotFoundAction ?? 'Deny';
    const inCluster = action === 'Allow' ? 'allows every request it matches' : `fails every request it matches with the policy's failurePolicy (${policy.spec.failurePolicy ?? 'Fail'})`;
    return fail(ref.name !== undefined ? 'spec.paramRef.name' : 'spec.paramRef.selector', `${ref.name !== undefined ? `${which} is not in the input` : `${which} in the input`}: in the cluster the binding ${inCluster} (parameterNotFoundAction ${action}); give the params objects with -f`);
  }
  if (ref.namespace === undefined && picked.some((m) => m.object.metadata?.namespace)) {
    return fail('spec.paramRef.namespace', `unset with a namespaced ${paramKind.kind}: kube-apiserver reads the params from each request's own namespace, which one policy entry cannot express`);
  }
  if (ref.name !== undefined) return [{ object: picked[0]!.object }];
  return picked.map((m) => ({ object: m.object, suffix: m.object.metadata?.name ?? '' }));
}
