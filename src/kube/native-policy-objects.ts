import type {
  V1beta1MutatingAdmissionPolicy,
  V1beta1MutatingAdmissionPolicyBinding,
  V1ConfigMap,
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
} from '@kubernetes/client-node';
import { actionsOfMode } from '../policy/cel/cel-decision.js';
import { configMapData, nativeObstacles, type NativeMutationSource } from '../policy/native-source.js';
import { POD_TEMPLATE_PATHS } from '../policy/pod-specs.js';
import type { PolicyEntry } from '../policy/policy.js';
import { metadataFor, namespaceSelectorExcluding, type DesiredConfigurationInput } from './desired-configurations.js';

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

/** A CEL string literal: JSON's escapes (\", \\, \n, \uXXXX) are CEL's too. */
const celString = (value: string): string => JSON.stringify(value);

/** An RFC 6901 reference token: `~` and `/` escaped. */
const pointerToken = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * JSON Patch operations, as CEL, that add each of `defaults` under metadata.<field> where the
 * object lacks the key, and the map itself first where the object has none: applyDefaultLabels'
 * result, never overwriting a value the user set.
 */
function fillAbsentExpression(field: 'labels' | 'annotations', defaults: Record<string, string>): string[] {
  const entries = Object.entries(defaults);
  if (entries.length === 0) return [];
  const map = `object.metadata.${field}`;
  return [
    `(has(${map}) ? [] : [JSONPatch{op: "add", path: "/metadata/${field}", value: {}}])`,
    ...entries.map(
      ([key, value]) =>
        `(has(${map}) && ${celString(key)} in ${map} ? [] : [JSONPatch{op: "add", path: ${celString(`/metadata/${field}/${pointerToken(key)}`)}, value: ${celString(value)}}])`,
    ),
  ];
}

/** The pod specs a defaultResources entry defaults: a Pod's `spec`, each workload kind's template's. */
const POD_SPEC_PATHS: ReadonlyArray<{ kinds: string[]; path: readonly string[] }> = [
  { kinds: ['Pod'], path: ['spec'] },
  ...Object.entries(
    Object.entries(POD_TEMPLATE_PATHS).reduce<Record<string, string[]>>((byPath, [kind, path]) => {
      (byPath[[...path, 'spec'].join('.')] ??= []).push(kind);
      return byPath;
    }, {}),
  ).map(([path, kinds]) => ({ kinds, path: path.split('.') })),
];

/**
 * The ApplyConfiguration that sets one resource field (requests or limits, cpu or memory) to
 * `value` in the containers of one list (containers or initContainers) of one pod spec path where
 * `needs` (a CEL condition on the container `c`) holds, for the kinds that keep their pod spec
 * there; an empty Object{} (nothing to merge) for any other object.
 */
function resourceApplyExpression(kinds: readonly string[], path: readonly string[], list: string, field: 'requests' | 'limits', resource: string, value: string, needs: string): string {
  const typeName = (depth: number): string => ['Object', ...path.slice(0, depth)].join('.');
  const listPath = `object.${[...path, list].join('.')}`;
  const itemType = `${typeName(path.length)}.${list}`;
  const item = `${itemType}{name: c.name, resources: ${itemType}.resources{${field}: {${celString(resource)}: ${celString(value)}}}}`;
  let body = `${listPath}.filter(c, ${needs}).map(c, ${item})`;
  body = `${list}: ${body}`;
  for (let depth = path.length; depth > 0; depth -= 1) body = `${path[depth - 1]}: ${typeName(depth)}{${body}}`;
  const guard = `object.kind ${kinds.length === 1 ? `== ${celString(kinds[0]!)}` : `in [${kinds.map(celString).join(', ')}]`} && has(${listPath})`;
  return `${guard} ? Object{${body}} : Object{}`;
}

/**
 * The mutations of a defaultResources entry, applyDefaultResources' result: for each pod spec
 * path, each of containers and initContainers (ephemeral containers take no resources), each of
 * cpu and memory, first the request where the container has neither a request nor a limit for it
 * (a limit set by the user leaves the request to kube-apiserver's defaulting), then the limit
 * where it has none and its request is not above the default limit (which would make it invalid).
 * Kubernetes' `quantity()` library compares them.
 */
export function defaultResourcesMutations(source: Extract<NativeMutationSource, { kind: 'defaultResources' }>): Array<{ patchType: 'ApplyConfiguration'; applyConfiguration: { expression: string } }> {
  const mutations: string[] = [];
  const has = (field: string, resource: string): string => `(has(c.resources) && has(c.resources.${field}) && ${celString(resource)} in c.resources.${field})`;
  for (const { kinds, path } of POD_SPEC_PATHS) {
    for (const list of ['containers', 'initContainers']) {
      for (const resource of ['cpu', 'memory'] as const) {
        const request = source.requests[resource];
        const limit = source.limits[resource];
        if (request !== undefined) mutations.push(resourceApplyExpression(kinds, path, list, 'requests', resource, request, `!${has('requests', resource)} && !${has('limits', resource)}`));
        if (limit !== undefined) {
          const requested = `c.resources.requests[${celString(resource)}]`;
          const above = `(${has('requests', resource)} && isQuantity(${requested}) && quantity(${requested}).compareTo(quantity(${celString(limit)})) > 0)`;
          mutations.push(resourceApplyExpression(kinds, path, list, 'limits', resource, limit, `!${has('limits', resource)} && !${above}`));
        }
      }
    }
  }
  return mutations.map((expression) => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } }));
}

/** The JSONPatch expression of a defaultLabels entry. */
export function defaultLabelsExpression(source: Extract<NativeMutationSource, { kind: 'defaultLabels' }>): string {
  return [...fillAbsentExpression('labels', source.labels), ...fillAbsentExpression('annotations', source.annotations)].join(' +\n');
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
