import type { HttpInfo, V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { isNotFound, readOrUndefined } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { dryRunOption } from '../kube/dry-run.js';
import { callApi } from '../kube/request-deadline.js';

export type WebhookConfiguration = V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration;
export type ConfigurationKind = 'mutating' | 'validating';

/** A configuration as read (undefined: it does not exist), with the time the API's clock gave the answer. */
export interface DatedRead {
  object: WebhookConfiguration | undefined;
  /** The answer's Date header (the answering kube-apiserver's clock, whole seconds), as epoch ms; undefined without one. */
  apiDateMs: number | undefined;
}

/**
 * One API for both webhook configuration kinds, so registration, reconcile and teardown are
 * written once. Every call is bounded by the request deadline and by `signal`.
 */
export interface ConfigurationApi {
  kind: ConfigurationKind;
  /** Plural resource name, as in API paths and RBAC rules. */
  resource: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations';
  /** Watch path for @kubernetes/client-node's Watch. */
  collectionPath: string;
  read(name: string, signal: AbortSignal): Promise<WebhookConfiguration | undefined>;
  /** `dryRun`: kube-apiserver authorizes, admits and validates it as the real write, and stores nothing. */
  create(body: WebhookConfiguration, signal: AbortSignal, dryRun?: boolean): Promise<WebhookConfiguration>;
  replace(body: WebhookConfiguration, signal: AbortSignal, dryRun?: boolean): Promise<WebhookConfiguration>;
  /**
   * 'absent' when it was already gone: the goal is reached either way. `only`: the object read
   * (its uid and resourceVersion, as the DELETE's preconditions), so that one written since is
   * not deleted: kube-apiserver answers 409 instead.
   */
  delete(name: string, signal: AbortSignal, timeoutMs?: number, only?: Preconditions): Promise<'deleted' | 'absent'>;
}

/** The API on client-node: a read may also say when the API answered. */
export interface DatedConfigurationApi extends ConfigurationApi {
  /** read, with the Date of the answer: how long the API shows the configuration unwritten (unchanged-since.ts). */
  readDated(name: string, signal: AbortSignal): Promise<DatedRead>;
}

/** The object a DELETE may remove, as kube-apiserver's DeleteOptions.preconditions name it. */
export interface Preconditions {
  uid: string;
  resourceVersion: string;
}

const deleteOptions = (only: Preconditions | undefined) => ({ propagationPolicy: 'Background', ...(only ? { body: { preconditions: only } } : {}) });

const GROUP_PATH = '/apis/admissionregistration.k8s.io/v1';

async function datedOrAbsent(read: () => Promise<HttpInfo<WebhookConfiguration>>): Promise<DatedRead> {
  const answer = await readOrUndefined(read);
  if (!answer) return { object: undefined, apiDateMs: undefined };
  const date = Date.parse(answer.headers['date'] ?? '');
  return { object: answer.data, apiDateMs: Number.isNaN(date) ? undefined : date };
}

async function deleteOrAbsent(remove: () => Promise<unknown>): Promise<'deleted' | 'absent'> {
  try {
    await remove();
    return 'deleted';
  } catch (error) {
    if (isNotFound(error)) return 'absent';
    throw error;
  }
}

export function mutatingConfigurationApi(api: KubeApi): DatedConfigurationApi {
  const admission = api.admission;
  return {
    kind: 'mutating',
    resource: 'mutatingwebhookconfigurations',
    collectionPath: `${GROUP_PATH}/mutatingwebhookconfigurations`,
    read: (name, signal) => readOrUndefined(() => callApi(signal, (o) => admission.readMutatingWebhookConfiguration({ name }, o))),
    readDated: (name, signal) => datedOrAbsent(() => callApi(signal, (o) => admission.readMutatingWebhookConfigurationWithHttpInfo({ name }, o))),
    create: (body, signal, dryRun) => callApi(signal, (o) => admission.createMutatingWebhookConfiguration({ body, ...dryRunOption(dryRun) }, o)),
    replace: (body, signal, dryRun) =>
      callApi(signal, (o) => admission.replaceMutatingWebhookConfiguration({ name: body.metadata?.name ?? '', body, ...dryRunOption(dryRun) }, o)),
    delete: (name, signal, timeoutMs, only) =>
      deleteOrAbsent(() => callApi(signal, (o) => admission.deleteMutatingWebhookConfiguration({ name, ...deleteOptions(only) }, o), timeoutMs)),
  };
}

export function validatingConfigurationApi(api: KubeApi): DatedConfigurationApi {
  const admission = api.admission;
  return {
    kind: 'validating',
    resource: 'validatingwebhookconfigurations',
    collectionPath: `${GROUP_PATH}/validatingwebhookconfigurations`,
    read: (name, signal) => readOrUndefined(() => callApi(signal, (o) => admission.readValidatingWebhookConfiguration({ name }, o))),
    readDated: (name, signal) => datedOrAbsent(() => callApi(signal, (o) => admission.readValidatingWebhookConfigurationWithHttpInfo({ name }, o))),
    create: (body, signal, dryRun) => callApi(signal, (o) => admission.createValidatingWebhookConfiguration({ body, ...dryRunOption(dryRun) }, o)),
    replace: (body, signal, dryRun) =>
      callApi(signal, (o) => admission.replaceValidatingWebhookConfiguration({ name: body.metadata?.name ?? '', body, ...dryRunOption(dryRun) }, o)),
    delete: (name, signal, timeoutMs, only) =>
      deleteOrAbsent(() => callApi(signal, (o) => admission.deleteValidatingWebhookConfiguration({ name, ...deleteOptions(only) }, o), timeoutMs)),
  };
}

export function configurationApis(api: KubeApi): readonly DatedConfigurationApi[] {
  return [mutatingConfigurationApi(api), validatingConfigurationApi(api)];
}
