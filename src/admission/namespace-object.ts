import type { AdmissionRequest, KubeObject } from './types.js';

/**
 * `namespaceObject` as kube-apiserver hands it to a ValidatingAdmissionPolicy (apiserver's
 * CreateNamespaceObject in plugin/cel/condition.go): the Namespace's spec and status and these
 * metadata fields only, no apiVersion and kind; managedFields, ownerReferences and the rest are
 * left out. The server's Namespace cache and the offline tools both shape it here.
 */
const KEPT_METADATA = [
  'name',
  'generateName',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'finalizers',
] as const;

export function namespaceObjectOf(namespace: KubeObject): KubeObject {
  const metadata: Record<string, unknown> = {};
  for (const key of KEPT_METADATA) {
    const value = namespace.metadata?.[key];
    if (value !== undefined) metadata[key] = value;
  }
  const shaped: KubeObject = { metadata };
  if (namespace['spec'] !== undefined) shaped['spec'] = namespace['spec'];
  if (namespace['status'] !== undefined) shaped['status'] = namespace['status'];
  return shaped;
}

/**
 * The namespace whose object a request's `namespaceObject` is, or undefined when it is null:
 * cluster-scoped requests, and requests on a Namespace itself (their request.namespace is the
 * namespace's own name; kube-apiserver's VAP dispatcher unsets it for kind v1 Namespace).
 */
export function namespaceObjectName(request: Pick<AdmissionRequest, 'namespace' | 'kind'>): string | undefined {
  const { kind } = request;
  if (kind.group === '' && kind.version === 'v1' && kind.kind === 'Namespace') return undefined;
  return request.namespace || undefined;
}

/** Where the server finds a request's Namespace: a cache of the cluster's Namespaces, never an API call. */
export interface NamespaceSource {
  /** The namespace shaped as namespaceObject; undefined when the source does not know it (yet). */
  get(name: string): KubeObject | undefined;
}

/**
 * The request's namespaceObject from `source`: null when the request has none, undefined when
 * the source does not know the namespace.
 */
export function namespaceObjectFrom(source: NamespaceSource | undefined, request: Pick<AdmissionRequest, 'namespace' | 'kind'>): KubeObject | null | undefined {
  const name = namespaceObjectName(request);
  if (name === undefined) return null;
  return source?.get(name);
}
