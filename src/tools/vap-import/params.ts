import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../admission/types.js';
import type { Manifest } from '../manifests.js';
import { selectorMatches } from '../../webhooks/label-selector.js';
import { describe, type BindingSpec, type PolicySpec, type Sourced } from './objects.js';
import type { ImportProblem } from './problems.js';

/** The params one entry is evaluated with: an object given in the input, or none (a policy without paramKind). */
export interface ResolvedParams {
  /** The params object (as kube-apiserver passes it to the expressions: the whole object); absent without paramKind. */
  object?: KubeObject;
  /** Added to the entry's name when a selector picks several. */
  suffix?: string;
}

const identity = (m: Manifest): string => `${m.object.metadata?.namespace ?? ''}/${m.object.metadata?.name ?? ''}`;
/** What the params say: the object without its metadata and status, which the cluster writes. */
const content = ({ metadata: _metadata, status: _status, ...rest }: KubeObject): unknown => rest;

/** Why the picked params cannot be told apart: one object given twice with different contents; undefined when none is. */
function givenTwice(picked: readonly Manifest[]): string | undefined {
  for (const [index, m] of picked.entries()) {
    const other = picked.slice(0, index).find((o) => identity(o) === identity(m) && !isDeepStrictEqual(content(o.object), content(m.object)));
    if (other) return `${describe(other)} and ${describe(m)} are one object of the cluster given twice with different contents; give only the one the cluster holds`;
  }
  return undefined;
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
  const twice = givenTwice(picked);
  if (twice) return fail(ref.name !== undefined ? 'spec.paramRef.name' : 'spec.paramRef.selector', twice);
  const once = picked.filter((m, index) => picked.findIndex((other) => identity(other) === identity(m)) === index);
  if (ref.name !== undefined) return [{ object: once[0]!.object }];
  return once.map((m) => ({ object: m.object, suffix: m.object.metadata?.name ?? '' }));
}
