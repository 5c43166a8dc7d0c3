/**
 * The admission chain a write goes through (contract 3.7, the handlers of pkg/endpoints):
 * mutating webhooks on the decoded and defaulted object, then the store's own checks, then
 * validating webhooks on the object about to be stored. The double calls whatever is plugged in
 * here; ../admission-caller/write-admission.ts plugs in the webhook caller.
 */
import type { UserInfo } from './identity.js';
import type { KubeObject } from './objects.js';
import type { ResourceType } from './resources.js';
import type { StatusBody } from './status.js';
import type { ObjectStore } from './store.js';

export type WebhookConfigurationResource =
  | 'mutatingwebhookconfigurations'
  | 'validatingwebhookconfigurations'
  | 'validatingadmissionpolicies'
  | 'validatingadmissionpolicybindings'
  | 'mutatingadmissionpolicies'
  | 'mutatingadmissionpolicybindings';

/** The params objects a binding's paramRef reads: the paramKind's type and its objects in a namespace (all, for a cluster-scoped kind). */
export interface ParamObjects {
  namespaced: boolean;
  objects: KubeObject[];
}

/**
 * What one kube-apiserver's webhook admission reads (contract 6a): its own informer caches of
 * webhook configurations and namespaces, which lag behind the store.
 */
export interface AdmissionSource {
  /** `kube-apiserver-N`. */
  readonly name: string;
  /** Goes up at every restart: whatever it kept before (connection pools) is gone. */
  readonly incarnation: number;
  /** False while it is down: its caches are gone, and so is every request it was serving. */
  readonly up: boolean;
  /** The configurations it knows, sorted by name. */
  configurations(resource: WebhookConfigurationResource): KubeObject[];
  /** A namespace from its cache, read live on a miss. */
  namespace(name: string): KubeObject | undefined;
  /**
   * The params of a ValidatingAdmissionPolicy (`apiVersion`/`kind` of its paramKind), read live
   * as the param lister's direct-API fallback does; undefined when no served type has that kind.
   */
  params(apiVersion: string, kind: string, namespace: string): ParamObjects | undefined;
}

/** What `params` answers from the store itself. */
export function paramsFromStore(store: ObjectStore, apiVersion: string, kind: string, namespace: string): ParamObjects | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const type = store.types.forVersionKind(group, version, kind);
  if (!type) return undefined;
  return { namespaced: type.namespaced, objects: store.list(type.key, type.namespaced ? namespace : undefined) };
}

/** The store itself as the source: no cache, no lag (a caller without a control plane). */
export function storeSource(store: ObjectStore): AdmissionSource {
  return {
    name: 'kube-apiserver-0',
    incarnation: 1,
    up: true,
    configurations: (resource) => store.list(resource),
    namespace: (name) => store.get('namespaces', undefined, name),
    params: (apiVersion, kind, namespace) => paramsFromStore(store, apiVersion, kind, namespace),
  };
}

export interface AdmissionAttributes {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  type: ResourceType;
  subresource?: string;
  /** For a Namespace, its own name. */
  namespace: string;
  /** Empty for a CREATE with generateName. */
  name: string;
  object?: KubeObject;
  oldObject?: KubeObject;
  user: UserInfo;
  dryRun: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions as received. */
  options: Record<string, unknown>;
  /** The kube-apiserver that serves the request (set by the double's front, not by the handlers). */
  apiserver?: AdmissionSource;
}

export type MutateOutcome = { object: KubeObject | undefined } | { status: StatusBody };

/** One request's pass through admission; warnings gather over both phases. */
export interface AdmissionRun {
  mutate(): Promise<MutateOutcome>;
  /** The Status that ends the request, or undefined to go on and store `object`. */
  validate(object: KubeObject | undefined): Promise<StatusBody | undefined>;
  warnings(): string[];
}

export type WriteAdmission = (attributes: AdmissionAttributes) => AdmissionRun;

/** No webhooks: what the double does unless admission is plugged in. */
export const NO_ADMISSION: WriteAdmission = (attributes) => ({
  mutate: async () => ({ object: attributes.object }),
  validate: async () => undefined,
  warnings: () => [],
});
