import type {
  V1beta1MutatingAdmissionPolicy,
  V1beta1MutatingAdmissionPolicyBinding,
  V1ConfigMap,
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
} from '@kubernetes/client-node';
import { actionsOfMode } from '../cel/cel-decision.js';
import { configMapData, nativeObstacles } from '../policy/engine.js';
import type { PolicyEntry } from '../policy/policy.js';
import { metadataFor, type DesiredConfigurationInput } from './desired-configurations.js';
import { namespaceSelectorExcluding } from '../webhooks/excluded-namespaces.js';
import { defaultLabelsExpression, defaultResourcesMutations } from './native-mutations.js';

/**
 * What a native entry registers: its policy, its binding and, when it has params, their ConfigMap;
 * a ValidatingAdmissionPolicy for a cel entry, a MutatingAdmissionPolicy for a mutating built-in.
 */
export type NativePolicyObjects = ValidatingPolicyObjects | MutatingPolicyObjects;
export interface ValidatingPolicyObjects {
  policy: V1ValidatingAdmissionPolicy;
  binding: V1ValidatingAdmissionPolicyBinding;
  params?: V1ConfigMap;
}
export interface MutatingPolicyObjects {
  policy: V1beta1MutatingAdmissionPolicy;
  binding: V1beta1MutatingAdmissionPolicyBinding;
  params?: undefined;
}

/** The group version MutatingAdmissionPolicies are written as (beta since 1.34; v1alpha1 of 1.32-1.33 is not used). */
export const MUTATING_POLICY_API_VERSION = 'admissionregistration.k8s.io/v1beta1';

/** Which install's native objects these are (the configuration name), so a sync never touches another install's. */
export const NATIVE_CONFIGURATION_LABEL = 'kube-admission-server.io/configuration';

export type NativeInput = Pick<DesiredConfigurationInput, 'configName' | 'namespace' | 'excludedNamespaces' | 'owner'>;

/** `<configuration name>-<entry name>`: one policy and one binding per entry, the ConfigMap with `-params`. */
export function nativePolicyName(entry: Pick<PolicyEntry, 'spec'>, input: Pick<NativeInput, 'configName'>): string {
  return `${input.configName}-${entry.spec.name}`;
}

type Metadata = NonNullable<V1ConfigMap['metadata']>;

/** Named and labelled as this install's, owned like the configurations. */
function nativeMetadata(input: NativeInput, objectName: string): Metadata {
  const base = metadataFor({ ...input, configName: objectName });
  return { ...base, labels: { ...base?.labels, [NATIVE_CONFIGURATION_LABEL]: input.configName } };
}

/** The entry's rules, selectors and the server's own and excluded namespaces, as a policy's matchConstraints. */
function matchConstraints(entry: PolicyEntry, input: NativeInput, rules: PolicyEntry['spec']['rules'], native?: PolicyEntry['native']) {
  const { spec } = entry;
  return {
    matchPolicy: spec.matchPolicy,
    namespaceSelector: namespaceSelectorExcluding(spec.namespaceSelector, [input.namespace, ...input.excludedNamespaces]),
    objectSelector: spec.objectSelector ?? {},
    resourceRules: rules.map((rule) => ({ ...rule, scope: rule.scope ?? '*', ...(native?.resourceNames ? { resourceNames: native.resourceNames } : {}) })),
    ...(native?.excludeResourceRules ? { excludeResourceRules: native.excludeResourceRules.map((rule) => ({ ...rule, scope: rule.scope ?? '*' })) } : {}),
  };
}

/**
 * The objects an entry with no obstacles registers: a ValidatingAdmissionPolicy, its binding and
 * params ConfigMap for a cel entry; a MutatingAdmissionPolicy and its binding for a mutating
 * built-in. Every default kube-apiserver fills in written out (so a read-back compares equal),
 * the server's own and excluded namespaces left out as for its webhooks, owned like the
 * configurations. Throws for an entry with obstacles (check nativeObstacles first).
 */
export function nativePolicyObjects(entry: PolicyEntry, input: NativeInput): NativePolicyObjects {
  return entry.nativeMutation ? mutatingPolicyObjects(entry, input) : validatingPolicyObjects(entry, input);
}

function refuseObstacles(entry: PolicyEntry): void {
  const obstacles = nativeObstacles(entry);
  if (obstacles.length > 0) throw new Error(`entry ${entry.spec.name} cannot run natively: ${obstacles.join('; ')}`);
}

/** A cel entry's ValidatingAdmissionPolicy, binding and params ConfigMap. */
export function validatingPolicyObjects(entry: PolicyEntry, input: NativeInput): ValidatingPolicyObjects {
  refuseObstacles(entry);
  const { spec, native } = entry;
  if (!native) throw new Error(`entry ${entry.spec.name} has no ValidatingAdmissionPolicy form`);
  const name = nativePolicyName(entry, input);
  const data = native.params === undefined ? undefined : configMapData(native.params);
  const policy: V1ValidatingAdmissionPolicy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: nativeMetadata(input, name),
    spec: {
      failurePolicy: spec.failurePolicy,
      ...(data ? { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } } : {}),
      matchConstraints: matchConstraints(entry, input, spec.rules, native),
      ...(spec.matchConditions?.length ? { matchConditions: spec.matchConditions } : {}),
      ...(native.variables.length > 0 ? { variables: native.variables } : {}),
      validations: native.validations,
      ...(native.auditAnnotations.length > 0 ? { auditAnnotations: native.auditAnnotations } : {}),
    },
  };
  const binding: V1ValidatingAdmissionPolicyBinding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: nativeMetadata(input, name),
    spec: {
      policyName: name,
      validationActions: native.validationActions ?? actionsOfMode(entry.mode),
      // Params missing (deleted by hand, not yet restored) deny rather than let everything through.
      ...(data ? { paramRef: { name: `${name}-params`, namespace: input.namespace, parameterNotFoundAction: 'Deny' } } : {}),
    },
  };
  const params: V1ConfigMap | undefined = data && { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...nativeMetadata(input, `${name}-params`), namespace: input.namespace }, data };
  return { policy, binding, ...(params ? { params } : {}) };
}

/** A mutation never applies to DELETE (kube-apiserver refuses it in a MutatingAdmissionPolicy), nor does the webhook patch one. */
function mutableRules(rules: PolicyEntry['spec']['rules']): PolicyEntry['spec']['rules'] {
  return rules.map((rule) => ({ ...rule, operations: rule.operations.filter((op) => op !== 'DELETE') })).filter((rule) => rule.operations.length > 0);
}

/** A mutating built-in's MutatingAdmissionPolicy (defaultLabels: one JSONPatch mutation; defaultResources: ApplyConfigurations) and binding. */
export function mutatingPolicyObjects(entry: PolicyEntry, input: NativeInput): MutatingPolicyObjects {
  refuseObstacles(entry);
  const { spec, nativeMutation: source } = entry;
  if (!source) throw new Error(`entry ${entry.spec.name} has no MutatingAdmissionPolicy form`);
  const name = nativePolicyName(entry, input);
  const policy: V1beta1MutatingAdmissionPolicy = {
    apiVersion: MUTATING_POLICY_API_VERSION,
    kind: 'MutatingAdmissionPolicy',
    metadata: nativeMetadata(input, name),
    spec: {
      failurePolicy: spec.failurePolicy,
      matchConstraints: matchConstraints(entry, input, mutableRules(spec.rules)),
      ...(spec.matchConditions?.length ? { matchConditions: spec.matchConditions } : {}),
      mutations: source.kind === 'defaultLabels' ? [{ patchType: 'JSONPatch', jsonPatch: { expression: defaultLabelsExpression(source) } }] : defaultResourcesMutations(source),
      reinvocationPolicy: spec.reinvocationPolicy ?? 'Never',
    },
  };
  const binding: V1beta1MutatingAdmissionPolicyBinding = {
    apiVersion: MUTATING_POLICY_API_VERSION,
    kind: 'MutatingAdmissionPolicyBinding',
    metadata: nativeMetadata(input, name),
    spec: { policyName: name },
  };
  return { policy, binding };
}
