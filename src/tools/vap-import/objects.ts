import type { KubeObject, LabelSelector } from '../../admission/types.js';
import type { Manifest } from '../manifests.js';

/** kube-apiserver serves these versions of the admission policy objects with the same fields. */
export const POLICY_API_VERSIONS = ['admissionregistration.k8s.io/v1', 'admissionregistration.k8s.io/v1beta1'] as const;

/** A rule of matchConstraints/matchResources: a webhook rule that may also name objects. */
export interface NamedRule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  resourceNames?: string[];
  scope?: string;
}

/** matchConstraints of a policy and matchResources of a binding. */
export interface MatchResources {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  resourceRules?: NamedRule[];
  excludeResourceRules?: NamedRule[];
  matchPolicy?: string;
}

export interface ValidationSpec {
  expression: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
}

export interface PolicySpec {
  failurePolicy?: string;
  paramKind?: { apiVersion?: string; kind?: string };
  matchConstraints?: MatchResources;
  validations?: ValidationSpec[];
  auditAnnotations?: { key: string; valueExpression: string }[];
  matchConditions?: { name: string; expression: string }[];
  variables?: { name: string; expression: string }[];
}

export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: LabelSelector;
  parameterNotFoundAction?: string;
}

export interface BindingSpec {
  policyName?: string;
  paramRef?: ParamRef;
  matchResources?: MatchResources;
  validationActions?: string[];
}

/** One input object with its source (file and document), for reports. */
export interface Sourced<S> {
  name: string;
  spec: S;
  object: KubeObject;
  source: string;
}

/** The input, sorted: policies, bindings, and everything else (the candidates for params). */
export interface ImportInput {
  policies: Sourced<PolicySpec>[];
  bindings: Sourced<BindingSpec>[];
  others: Manifest[];
  /** Admission policy objects of a version or kind this import does not read (MutatingAdmissionPolicy, v1alpha1). */
  unread: Manifest[];
}

const isPolicyGroup = (apiVersion: string): boolean => apiVersion.startsWith('admissionregistration.k8s.io/');

function sourced<S>(manifest: Manifest): Sourced<S> {
  const object = manifest.object as KubeObject & { spec?: S };
  return { name: object.metadata?.name ?? '', spec: (object.spec ?? {}) as S, object: manifest.object, source: manifest.source };
}

export function sortInput(manifests: readonly Manifest[]): ImportInput {
  const input: ImportInput = { policies: [], bindings: [], others: [], unread: [] };
  for (const manifest of manifests) {
    const { apiVersion = '', kind = '' } = manifest.object;
    const readable = (POLICY_API_VERSIONS as readonly string[]).includes(apiVersion);
    if (readable && kind === 'ValidatingAdmissionPolicy') input.policies.push(sourced<PolicySpec>(manifest));
    else if (readable && kind === 'ValidatingAdmissionPolicyBinding') input.bindings.push(sourced<BindingSpec>(manifest));
    else if (isPolicyGroup(apiVersion) && /AdmissionPolicy(Binding)?$/.test(kind)) input.unread.push(manifest);
    else input.others.push(manifest);
  }
  return input;
}

/** How a report names an object: `ValidatingAdmissionPolicyBinding/name (file document 2)`. */
export function describe(object: { object: KubeObject; source: string }): string {
  return `${object.object.kind}/${object.object.metadata?.name ?? '?'} (${object.source})`;
}
