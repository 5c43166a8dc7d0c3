import type { V1ConfigMap, V1ValidatingAdmissionPolicy, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import { actionsOfMode } from '../policy/cel/cel-decision.js';
import { configMapData, nativeObstacles } from '../policy/native-source.js';
import type { PolicyEntry } from '../policy/policy.js';
import { metadataFor, namespaceSelectorExcluding, type DesiredConfigurationInput } from './desired-configurations.js';

/** What a native entry registers: its policy, its binding and, when it has params, their ConfigMap. */
export interface NativePolicyObjects {
  policy: V1ValidatingAdmissionPolicy;
  binding: V1ValidatingAdmissionPolicyBinding;
  params?: V1ConfigMap;
}

/** Which install's native objects these are (the configuration name), so a sync never touches another install's. */
export const NATIVE_CONFIGURATION_LABEL = 'kube-admission-server.io/configuration';

export type NativeInput = Pick<DesiredConfigurationInput, 'configName' | 'namespace' | 'excludedNamespaces' | 'owner'>;

/** `<configuration name>-<entry name>`: one policy and one binding per entry, the ConfigMap with `-params`. */
export function nativePolicyName(entry: Pick<PolicyEntry, 'spec'>, input: Pick<NativeInput, 'configName'>): string {
  return `${input.configName}-${entry.spec.name}`;
}

/**
 * The ValidatingAdmissionPolicy, binding and params ConfigMap for a cel entry, every default
 * kube-apiserver fills in written out (so a read-back compares equal), the server's own and
 * excluded namespaces left out as for its webhooks, owned like the configurations. Throws for
 * an entry with obstacles (check nativeObstacles first).
 */
export function nativePolicyObjects(entry: PolicyEntry, input: NativeInput): NativePolicyObjects {
  const obstacles = nativeObstacles(entry);
  if (obstacles.length > 0 || !entry.native) throw new Error(`entry ${entry.spec.name} cannot run natively: ${obstacles.join('; ')}`);
  const { spec, native } = entry;
  const name = nativePolicyName(entry, input);
  const metadata = (objectName: string): NonNullable<V1ConfigMap['metadata']> => {
    const base = metadataFor({ ...input, configName: objectName });
    return { ...base, labels: { ...base?.labels, [NATIVE_CONFIGURATION_LABEL]: input.configName } };
  };
  const data = native.params === undefined ? undefined : configMapData(native.params);
  const rules = spec.rules.map((rule) => ({ ...rule, scope: rule.scope ?? '*', ...(native.resourceNames ? { resourceNames: native.resourceNames } : {}) }));
  const policy: V1ValidatingAdmissionPolicy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: metadata(name),
    spec: {
      failurePolicy: spec.failurePolicy,
      ...(data ? { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } } : {}),
      matchConstraints: {
        matchPolicy: spec.matchPolicy,
        namespaceSelector: namespaceSelectorExcluding(spec.namespaceSelector, [input.namespace, ...input.excludedNamespaces]),
        objectSelector: spec.objectSelector ?? {},
        resourceRules: rules,
        ...(native.excludeResourceRules ? { excludeResourceRules: native.excludeResourceRules.map((rule) => ({ ...rule, scope: rule.scope ?? '*' })) } : {}),
      },
      ...(spec.matchConditions?.length ? { matchConditions: spec.matchConditions } : {}),
      ...(native.variables.length > 0 ? { variables: native.variables } : {}),
      validations: native.validations,
      ...(native.auditAnnotations.length > 0 ? { auditAnnotations: native.auditAnnotations } : {}),
    },
  };
  const binding: V1ValidatingAdmissionPolicyBinding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: metadata(name),
    spec: {
      policyName: name,
      validationActions: native.validationActions ?? actionsOfMode(entry.mode),
      // Params missing (deleted by hand, not yet restored) deny rather than let everything through.
      ...(data ? { paramRef: { name: `${name}-params`, namespace: input.namespace, parameterNotFoundAction: 'Deny' } } : {}),
    },
  };
  const params: V1ConfigMap | undefined = data && { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...metadata(`${name}-params`), namespace: input.namespace }, data };
  return { policy, binding, ...(params ? { params } : {}) };
}
