import { randomUUID } from 'node:crypto';
import type { AdmissionRequest, KubeObject, UserInfo } from '../policy/types.js';
import { groupVersionKindOf, groupVersionResourceOf, isClusterScoped } from './resources.js';

export const DEFAULT_USER: UserInfo = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };

/** How admissionRequestFor builds a request: UPDATE or CREATE, the default namespace, the user. */
export interface RequestOptions {
  /** The stored version: the request is an UPDATE against it. */
  oldObject?: KubeObject;
  /** Namespace of objects that name none (kubectl's default). */
  defaultNamespace: string;
  userInfo?: UserInfo;
}

/** The namespace an object lands in: its own, the default for namespaced kinds, its name for a Namespace. */
export function namespaceOf(object: KubeObject, defaultNamespace: string): string {
  if (object.kind === 'Namespace') return object.metadata?.name ?? '';
  if (isClusterScoped(object.kind ?? '')) return '';
  return object.metadata?.namespace || defaultNamespace;
}

/**
 * The AdmissionRequest kube-apiserver would send for creating `object` (or updating
 * `oldObject` to it), as contract section 1 describes: what mutating webhooks see.
 */
export function admissionRequestFor(object: KubeObject, options: RequestOptions): AdmissionRequest {
  const kind = groupVersionKindOf(object);
  const resource = groupVersionResourceOf(object);
  const namespace = namespaceOf(object, options.defaultNamespace);
  const copy = structuredClone(object);
  const metadata = (copy.metadata ??= {});
  if (namespace && object.kind !== 'Namespace') metadata.namespace = namespace;
  const operation = options.oldObject ? 'UPDATE' : 'CREATE';
  if (operation === 'CREATE') metadata['creationTimestamp'] = null;
  const request: AdmissionRequest = {
    uid: randomUUID(),
    kind,
    resource,
    requestKind: kind,
    requestResource: resource,
    operation,
    userInfo: options.userInfo ?? DEFAULT_USER,
    object: copy,
    oldObject: options.oldObject ? structuredClone(options.oldObject) : null,
    dryRun: false,
    options: { kind: operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
  };
  // A generateName CREATE has no name in the request (contract 1.2).
  if (metadata.name) request.name = metadata.name;
  if (namespace) request.namespace = namespace;
  return request;
}
