import {
  AdmissionregistrationV1beta1Api,
  type V1beta1MutatingAdmissionPolicy,
  type V1beta1MutatingAdmissionPolicyBinding,
  type V1ConfigMap,
  type V1ObjectMeta,
  type V1ValidatingAdmissionPolicy,
  type V1ValidatingAdmissionPolicyBinding,
} from '@kubernetes/client-node';
import { readOrUndefined } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from './desired-configurations.js';
import { dryRunOption } from '../kube/dry-run.js';
import { callApi } from '../kube/request-deadline.js';

export type NativeObject = V1ValidatingAdmissionPolicy | V1ValidatingAdmissionPolicyBinding | V1ConfigMap | V1beta1MutatingAdmissionPolicy | V1beta1MutatingAdmissionPolicyBinding;
/** policy and binding: a ValidatingAdmissionPolicy's; mutatingPolicy and mutatingBinding: a MutatingAdmissionPolicy's. */
export type NativeKind = 'policy' | 'binding' | 'params' | 'mutatingPolicy' | 'mutatingBinding';

/** One kind of the objects a native entry registers: read, create, replace, delete, list this server's. */
export interface NativeObjectApi<T extends NativeObject = NativeObject> {
  kind: NativeKind;
  /** Plural resource name, as in API paths and RBAC rules. */
  resource: string;
  read(name: string, signal: AbortSignal): Promise<T | undefined>;
  /** `dryRun`: answered as the real write (rights, validation), nothing stored. */
  create(body: T, signal: AbortSignal, dryRun?: boolean): Promise<T>;
  replace(body: T, signal: AbortSignal, dryRun?: boolean): Promise<T>;
  delete(name: string, signal: AbortSignal): Promise<'deleted' | 'absent'>;
  /** The objects labelled managed-by this server (whichever install: callers filter by name). */
  listManaged(signal: AbortSignal): Promise<T[]>;
}

const MANAGED = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;
const nameOf = (body: { metadata?: V1ObjectMeta }): string => body.metadata?.name ?? '';

async function deleteOrAbsent(remove: () => Promise<unknown>): Promise<'deleted' | 'absent'> {
  const removed = await readOrUndefined(remove);
  return removed === undefined ? 'absent' : 'deleted';
}

export interface NativeObjectApis {
  policy: NativeObjectApi<V1ValidatingAdmissionPolicy>;
  binding: NativeObjectApi<V1ValidatingAdmissionPolicyBinding>;
  params: NativeObjectApi<V1ConfigMap>;
  mutatingPolicy: NativeObjectApi<V1beta1MutatingAdmissionPolicy>;
  mutatingBinding: NativeObjectApi<V1beta1MutatingAdmissionPolicyBinding>;
}

export function nativeObjectApis(api: KubeApi, namespace: string): NativeObjectApis {
  const a = api.admission;
  const core = api.core;
  // Made on first use: a server with no mutating native entry never needs the beta group's client.
  let betaClient: AdmissionregistrationV1beta1Api | undefined;
  const beta = (): AdmissionregistrationV1beta1Api => (betaClient ??= api.kubeConfig.makeApiClient(AdmissionregistrationV1beta1Api));
  return {
    mutatingPolicy: {
      kind: 'mutatingPolicy',
      resource: 'mutatingadmissionpolicies',
      read: (name, signal) => readOrUndefined(() => callApi(signal, (o) => beta().readMutatingAdmissionPolicy({ name }, o))),
      create: (body, signal, dryRun) => callApi(signal, (o) => beta().createMutatingAdmissionPolicy({ body, ...dryRunOption(dryRun) }, o)),
      replace: (body, signal, dryRun) => callApi(signal, (o) => beta().replaceMutatingAdmissionPolicy({ name: nameOf(body), body, ...dryRunOption(dryRun) }, o)),
      delete: (name, signal) => deleteOrAbsent(() => callApi(signal, (o) => beta().deleteMutatingAdmissionPolicy({ name, propagationPolicy: 'Background' }, o))),
      listManaged: async (signal) => (await callApi(signal, (o) => beta().listMutatingAdmissionPolicy({ labelSelector: MANAGED }, o))).items,
    },
    mutatingBinding: {
      kind: 'mutatingBinding',
      resource: 'mutatingadmissionpolicybindings',
      read: (name, signal) => readOrUndefined(() => callApi(signal, (o) => beta().readMutatingAdmissionPolicyBinding({ name }, o))),
      create: (body, signal, dryRun) => callApi(signal, (o) => beta().createMutatingAdmissionPolicyBinding({ body, ...dryRunOption(dryRun) }, o)),
      replace: (body, signal, dryRun) => callApi(signal, (o) => beta().replaceMutatingAdmissionPolicyBinding({ name: nameOf(body), body, ...dryRunOption(dryRun) }, o)),
      delete: (name, signal) => deleteOrAbsent(() => callApi(signal, (o) => beta().deleteMutatingAdmissionPolicyBinding({ name, propagationPolicy: 'Background' }, o))),
      listManaged: async (signal) => (await callApi(signal, (o) => beta().listMutatingAdmissionPolicyBinding({ labelSelector: MANAGED }, o))).items,
    },
    policy: {
      kind: 'policy',
      resource: 'validatingadmissionpolicies',
      read: (name, signal) => readOrUndefined(() => callApi(signal, (o) => a.readValidatingAdmissionPolicy({ name }, o))),
      create: (body, signal, dryRun) => callApi(signal, (o) => a.createValidatingAdmissionPolicy({ body, ...dryRunOption(dryRun) }, o)),
      replace: (body, signal, dryRun) => callApi(signal, (o) => a.replaceValidatingAdmissionPolicy({ name: nameOf(body), body, ...dryRunOption(dryRun) }, o)),
      delete: (name, signal) => deleteOrAbsent(() => callApi(signal, (o) => a.deleteValidatingAdmissionPolicy({ name, propagationPolicy: 'Background' }, o))),
      listManaged: async (signal) => (await callApi(signal, (o) => a.listValidatingAdmissionPolicy({ labelSelector: MANAGED }, o))).items,
    },
    binding: {
      kind: 'binding',
      resource: 'validatingadmissionpolicybindings',
      read: (name, signal) => readOrUndefined(() => callApi(signal, (o) => a.readValidatingAdmissionPolicyBinding({ name }, o))),
      create: (body, signal, dryRun) => callApi(signal, (o) => a.createValidatingAdmissionPolicyBinding({ body, ...dryRunOption(dryRun) }, o)),
      replace: (body, signal, dryRun) => callApi(signal, (o) => a.replaceValidatingAdmissionPolicyBinding({ name: nameOf(body), body, ...dryRunOption(dryRun) }, o)),
      delete: (name, signal) => deleteOrAbsent(() => callApi(signal, (o) => a.deleteValidatingAdmissionPolicyBinding({ name, propagationPolicy: 'Background' }, o))),
      listManaged: async (signal) => (await callApi(signal, (o) => a.listValidatingAdmissionPolicyBinding({ labelSelector: MANAGED }, o))).items,
    },
    params: {
      kind: 'params',
      resource: 'configmaps',
      read: (name, signal) => readOrUndefined(() => callApi(signal, (o) => core.readNamespacedConfigMap({ name, namespace }, o))),
      create: (body, signal, dryRun) => callApi(signal, (o) => core.createNamespacedConfigMap({ namespace, body, ...dryRunOption(dryRun) }, o)),
      replace: (body, signal, dryRun) => callApi(signal, (o) => core.replaceNamespacedConfigMap({ name: nameOf(body), namespace, body, ...dryRunOption(dryRun) }, o)),
      delete: (name, signal) => deleteOrAbsent(() => callApi(signal, (o) => core.deleteNamespacedConfigMap({ name, namespace }, o))),
      listManaged: async (signal) => (await callApi(signal, (o) => core.listNamespacedConfigMap({ namespace, labelSelector: MANAGED }, o))).items,
    },
  };
}
