/**
 * Any AdmissionRequest a handler can receive, built from an object the way kube-apiserver builds
 * it (local-cluster/CONTRACT.md section 1): for tests of handlers, without a cluster.
 */
import type { AdmissionRequest, KubeObject, Operation, UserInfo } from '../admission/types.js';
import { admissionRequestFor } from '../kube/evaluation/admission-request.js';

/** How the request is made: the operation and everything else kube-apiserver would put in it. */
export interface ReviewRequestOptions<T> {
  /** Default CREATE, or UPDATE when there is an oldObject. */
  operation?: Operation;
  /** The stored version: UPDATE compares against it; for DELETE the object itself is the stored one. */
  oldObject?: T;
  /** The object's own namespace, else this (default `default`, as kubectl); none for cluster-scoped kinds. */
  namespace?: string;
  /** Default false; true also sets `options.dryRun: ["All"]`, as kubectl --dry-run=server sends. */
  dryRun?: boolean;
  /** Default kubectl's admin of a kind or kubeadm cluster (kubernetes-admin, system:masters). */
  userInfo?: UserInfo;
  /**
   * e.g. `status`, `ephemeralcontainers` (kubectl debug), `resize`, or for CONNECT `exec`,
   * `attach`, `portforward`, `proxy`.
   */
  subResource?: string;
  /** CONNECT only: the options object kube-apiserver sends as `object` (default `{ kind: Pod<Sub>Options }`). */
  connectOptions?: KubeObject;
  /** Default a random UUID. */
  uid?: string;
}

/**
 * The AdmissionRequest kube-apiserver would send for `object`: a CREATE, an UPDATE from
 * `oldObject`, a DELETE of it (object null, oldObject the object), or a CONNECT to one of its
 * subresources (object the connect options); with dryRun, userInfo and a subresource as given.
 * The same builder as `evaluate` and `test` (admissionRequestFor), on a copy of the object: the
 * request is yours to hand to a handler that edits it. Throws for a request kube-apiserver would
 * never send (an UPDATE without the stored version, a CONNECT to no connect subresource...).
 */
export function admissionRequest<T extends object>(object: T, options: ReviewRequestOptions<T> = {}): AdmissionRequest<T> {
  const request = admissionRequestFor(structuredClone(object) as KubeObject, {
    defaultNamespace: options.namespace ?? 'default',
    ...(options.oldObject ? { oldObject: structuredClone(options.oldObject) as KubeObject } : {}),
    ...(options.userInfo ? { userInfo: options.userInfo } : {}),
    ...(options.operation ? { operation: options.operation } : {}),
    ...(options.dryRun !== undefined ? { dryRun: options.dryRun } : {}),
    ...(options.subResource ? { subResource: options.subResource } : {}),
  });
  if (options.uid) request.uid = options.uid;
  if (request.operation === 'CONNECT' && options.connectOptions) {
    request.object = structuredClone(options.connectOptions);
    if (options.connectOptions.kind) request.kind = request.requestKind = { group: '', version: 'v1', kind: options.connectOptions.kind };
  }
  return request as AdmissionRequest<T>;
}
