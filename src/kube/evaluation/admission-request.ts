import { randomUUID } from 'node:crypto';
import type { AdmissionRequest, GroupVersionResource, KubeObject, Operation, UserInfo } from '../../admission/types.js';
import { asDecodedByKubeApiserver } from './kube-defaults/apply-defaults.js';
import { asStored, kubeTime, preparedForCreate, preparedForUpdate } from './kube-defaults/stored-objects.js';
import { connectOptionsKind, DEFAULT_USER, shapeProblem } from './request-shape.js';
import { groupVersionKindOf, groupVersionResourceOf, isClusterScoped } from './resources.js';
import { BadInputError } from '../../util/bad-input.js';

export { DEFAULT_USER } from './request-shape.js';

/** How admissionRequestFor builds a request: UPDATE or CREATE, the default namespace, the user. */
export interface RequestOptions {
  /** The stored version: the request is an UPDATE against it (or the DELETE of it). */
  oldObject?: KubeObject;
  /** Namespace of objects that name none (kubectl's default). */
  defaultNamespace: string;
  userInfo?: UserInfo;
  /** Default CREATE, or UPDATE when there is an oldObject. */
  operation?: Operation;
  dryRun?: boolean;
  /** e.g. status, ephemeralcontainers, or a CONNECT subresource (exec, attach, portforward, proxy). */
  subResource?: string;
  /** The resource as discovery names it (audit); default: guessed from the kind. */
  resource?: GroupVersionResource;
  /** Whether the kind is namespaced, as discovery says (audit); default: known built-in kinds. */
  namespaced?: boolean;
}

/** The namespace an object lands in: its own, the default for namespaced kinds, its name for a Namespace. */
export function namespaceOf(object: KubeObject, defaultNamespace: string, namespaced?: boolean): string {
  if (object.kind === 'Namespace') return object.metadata?.name ?? '';
  if (namespaced === false || (namespaced === undefined && isClusterScoped(object.kind ?? ''))) return '';
  return object.metadata?.namespace || defaultNamespace;
}

function describe(object: KubeObject, namespace: string): string {
  return `${object.kind} ${namespace ? `${namespace}/` : ''}${object.metadata?.name ?? object.metadata?.generateName ?? ''}`;
}

/**
 * The object with the namespace it lands in written into its metadata: a new top level and
 * metadata, the rest shared with the manifest (simulate gives every handler that may change its
 * request a copy of its own).
 */
function placed(object: KubeObject, namespace: string): KubeObject {
  if (!namespace || object.kind === 'Namespace') return { ...object, metadata: { ...object.metadata } };
  return { ...object, metadata: { ...object.metadata, namespace } };
}

/** `options` of the request: the meta.k8s.io/v1 options of the verb (none for CONNECT), dryRun as kubectl sends it. */
function optionsFor(operation: Operation, dryRun: boolean): Record<string, unknown> | null {
  const kind = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: undefined }[operation];
  if (!kind) return null;
  return { kind, apiVersion: 'meta.k8s.io/v1', ...(dryRun ? { dryRun: ['All'] } : {}) };
}

interface Bodies {
  object: KubeObject | null;
  oldObject: KubeObject | null;
}

/**
 * What kube-apiserver puts in object and oldObject (local-cluster/CONTRACT.md 1.2): the new object on CREATE and
 * UPDATE (with the stored one as oldObject), only the stored one on DELETE, and the connect
 * options on CONNECT. A CREATE reaches the mutating webhooks before the object has a uid or a
 * creation time (serialized as null); an UPDATE keeps the stored object's.
 */
function bodiesFor(operation: Operation, object: KubeObject, stored: KubeObject | undefined, connectKind: string | undefined): Bodies {
  switch (operation) {
    case 'CREATE':
      return { object: { ...object, metadata: { ...object.metadata, creationTimestamp: null } }, oldObject: null };
    case 'UPDATE': {
      const kept = { uid: stored?.metadata?.uid, creationTimestamp: stored?.metadata?.creationTimestamp };
      return { object: { ...object, metadata: { ...object.metadata, uid: object.metadata?.uid || kept.uid, creationTimestamp: object.metadata?.creationTimestamp || kept.creationTimestamp } }, oldObject: stored ?? null };
    }
    case 'DELETE':
      return { object: null, oldObject: stored ?? null };
    case 'CONNECT':
      return { object: { kind: connectKind, apiVersion: 'v1' }, oldObject: null };
  }
}

/**
 * The AdmissionRequest kube-apiserver would send for `object` (local-cluster/CONTRACT.md section 1): created, or
 * updated from `oldObject`, deleted, or connected to, as `options` says; what mutating webhooks
 * see. Throws BadInputError for a request kube-apiserver would never send.
 */
export function admissionRequestFor(object: KubeObject, options: RequestOptions): AdmissionRequest {
  const namespace = namespaceOf(object, options.defaultNamespace, options.namespaced);
  const operation = options.operation ?? (options.oldObject ? 'UPDATE' : 'CREATE');
  const resource = options.resource ?? groupVersionResourceOf(object);
  const problem = shapeProblem(operation, resource.resource, options.subResource);
  if (problem) throw new BadInputError(`${describe(object, namespace)}: ${problem}`);
  if (operation === 'UPDATE' && !options.oldObject) {
    throw new BadInputError(`${describe(object, namespace)}: an UPDATE needs the stored version (evaluate --old FILE, or oldResources in a test file)`);
  }
  const connectKind = connectOptionsKind(resource.resource, options.subResource);
  const kind = connectKind ? { group: '', version: 'v1', kind: connectKind } : groupVersionKindOf(object);
  // What the webhooks get is the body as kube-apiserver decoded and defaulted it, not the file.
  const stored = options.oldObject ? asStored(placed(asDecodedByKubeApiserver(options.oldObject), namespace)) : undefined;
  const given = connectKind || operation === 'DELETE' ? object : asDecodedByKubeApiserver(object);
  const bodies = bodiesFor(operation, placed(given, namespace), operation === 'DELETE' ? (stored ?? asStored(placed(asDecodedByKubeApiserver(object), namespace))) : stored, connectKind);
  const dryRun = options.dryRun ?? false;
  const request: AdmissionRequest = {
    uid: randomUUID(),
    kind,
    resource,
    ...(options.subResource ? { subResource: options.subResource } : {}),
    requestKind: kind,
    requestResource: resource,
    ...(options.subResource ? { requestSubResource: options.subResource } : {}),
    operation,
    userInfo: options.userInfo ?? DEFAULT_USER,
    ...bodies,
    dryRun,
    options: optionsFor(operation, dryRun),
  };
  // A generateName CREATE has no name in the request (local-cluster/CONTRACT.md 1.2).
  const name = object.metadata?.name;
  if (name) request.name = name;
  if (namespace) request.namespace = namespace;
  return request;
}

/** kube-apiserver's alphabet for generateName suffixes (apiserver's names.SimpleNameGenerator). */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function generatedName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return `${prefix}${suffix}`;
}

/**
 * The request the validating webhooks get: by then kube-apiserver has run the kind's registry
 * strategy on the object (rest.BeforeCreate and BeforeUpdate: PrepareForCreate or
 * PrepareForUpdate, Canonicalize), and on CREATE given it its uid and creation time and generated
 * its name from generateName, so the request names it too.
 */
export function validatingPhaseRequest(request: AdmissionRequest): AdmissionRequest {
  if (!request.object || request.kind.kind !== request.object.kind) return request;
  if (request.operation === 'UPDATE' && request.oldObject) return { ...request, object: preparedForUpdate(request.object, request.oldObject) };
  if (request.operation !== 'CREATE') return request;
  const metadata = request.object.metadata ?? {};
  const name = metadata.name || (metadata.generateName ? generatedName(metadata.generateName) : '');
  const object = preparedForCreate({ ...request.object, metadata: { ...metadata, ...(name ? { name } : {}), uid: metadata.uid || randomUUID(), creationTimestamp: metadata.creationTimestamp || kubeTime(new Date()) } });
  return { ...request, object, ...(name ? { name } : {}) };
}
