/**
 * metav1.Status bodies exactly as kube-apiserver writes them (contract sections 2.3, 4.4, 5).
 * Key order follows the Go struct: kind, apiVersion, metadata, status, message, reason, details, code.
 */
import { formatFieldError, formatFieldErrorBody, causeReason, type FieldError } from './field-errors.js';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/** What a resource contributes to error texts: `secrets`, or `leases.coordination.k8s.io`. */
export interface ResourceRef {
  group: string;
  resource: string;
}

export function qualifiedResource(ref: ResourceRef): string {
  return ref.group === '' ? ref.resource : `${ref.resource}.${ref.group}`;
}

export function statusBody(fields: Omit<StatusBody, 'kind' | 'apiVersion' | 'metadata'>): StatusBody {
  const body: StatusBody = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: fields.status };
  if (fields.message !== undefined) body.message = fields.message;
  if (fields.reason !== undefined && fields.reason !== '') body.reason = fields.reason;
  if (fields.details !== undefined) body.details = fields.details;
  if (fields.code !== undefined) body.code = fields.code;
  return body;
}

function failure(code: number, reason: string, message: string, details?: StatusDetails): StatusBody {
  return statusBody({ status: 'Failure', message, reason, details, code });
}

function resourceDetails(ref: ResourceRef, name: string): StatusDetails {
  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (ref.group !== '') details.group = ref.group;
  details.kind = ref.resource;
  return details;
}

export function notFound(ref: ResourceRef, name: string): StatusBody {
  return failure(404, 'NotFound', `${qualifiedResource(ref)} "${name}" not found`, resourceDetails(ref, name));
}

export function alreadyExists(ref: ResourceRef, name: string): StatusBody {
  return failure(409, 'AlreadyExists', `${qualifiedResource(ref)} "${name}" already exists`, resourceDetails(ref, name));
}

export const MODIFIED_CONFLICT =
  'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(ref: ResourceRef, name: string, detail: string = MODIFIED_CONFLICT): StatusBody {
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(ref)} "${name}": ${detail}`,
    resourceDetails(ref, name),
  );
}

/** A kind and group as NewInvalid prints them: `ValidatingWebhookConfiguration.admissionregistration.k8s.io`. */
export interface QualifiedKind {
  group: string;
  kind: string;
}

export function invalid(qualified: QualifiedKind, name: string, errors: readonly FieldError[]): StatusBody {
  const kindText = qualified.group === '' ? qualified.kind : `${qualified.kind}.${qualified.group}`;
  const texts = errors.map(formatFieldError);
  const joined = texts.length === 1 ? (texts[0] ?? '') : `[${texts.join(', ')}]`;
  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (qualified.group !== '') details.group = qualified.group;
  details.kind = qualified.kind;
  details.causes = errors.map((error) => ({
    reason: causeReason(error),
    message: formatFieldErrorBody(error),
    field: error.field,
  }));
  return failure(422, 'Invalid', `${kindText} "${name}" is invalid: ${joined}`, details);
}

export function badRequest(message: string): StatusBody {
  return failure(400, 'BadRequest', message);
}

export function unauthorized(): StatusBody {
  return failure(401, 'Unauthorized', 'Unauthorized');
}

export function methodNotAllowed(): StatusBody {
  return failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function pathNotFound(): StatusBody {
  return failure(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** `note`: the double's own explanation, where kube-apiserver would have accepted the body. */
export function unsupportedMediaType(accepted: readonly string[], note?: string): StatusBody {
  return failure(
    415,
    'UnsupportedMediaType',
    note ?? `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

export function requestEntityTooLarge(message: string): StatusBody {
  return failure(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`);
}

export function internalError(message: string): StatusBody {
  return failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/** The Status an injected 5xx fault answers with, per code. */
export function serverFault(code: number, retryAfterSeconds?: number): StatusBody {
  const details: StatusDetails | undefined =
    retryAfterSeconds === undefined ? undefined : { retryAfterSeconds };
  switch (code) {
    case 429:
      return failure(429, 'TooManyRequests', 'the server has received too many requests and has asked us to try again later', details);
    case 503:
      return failure(503, 'ServiceUnavailable', 'the server is currently unable to handle the request', details);
    case 504:
      return failure(504, 'Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request', details);
    default:
      return failure(code, 'InternalError', 'Internal error occurred: injected fault', {
        ...(details ?? {}),
        causes: [{ message: 'injected fault' }],
      });
  }
}

export function deleteSuccess(ref: ResourceRef, name: string, uid: string): StatusBody {
  return statusBody({ status: 'Success', details: { ...resourceDetails(ref, name), uid } });
}

export interface ForbiddenRequest {
  user: string;
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** The RBAC denial text of the authorizer, as kube-apiserver words it. */
export function forbidden(request: ForbiddenRequest): StatusBody {
  const ref = { group: request.group, resource: request.resource };
  const target = request.name ? `${qualifiedResource(ref)} "${request.name}"` : qualifiedResource(ref);
  const resourceText = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
  const scope = request.namespace ? `in the namespace "${request.namespace}"` : 'at the cluster scope';
  const message = `${target} is forbidden: User "${request.user}" cannot ${request.verb} resource "${resourceText}" in API group "${request.group}" ${scope}`;
  return failure(403, 'Forbidden', message, resourceDetails(ref, request.name ?? ''));
}

/** forbidCreateAdmission: no new custom resource while its CRD is being deleted. */
export function forbiddenCreate(ref: ResourceRef, name: string): StatusBody {
  const target = name === '' ? qualifiedResource(ref) : `${qualifiedResource(ref)} "${name}"`;
  return failure(403, 'Forbidden', `${target} is forbidden: create not allowed while custom resource definition is terminating`, resourceDetails(ref, name));
}

/**
 * etcd's refusal of a write larger than its request limit: not an API status, so kube-apiserver
 * answers 500 with the error's text and no reason (ErrorToAPIStatus's default).
 */
export function etcdRequestTooLarge(): StatusBody {
  return statusBody({ status: 'Failure', message: 'etcdserver: request is too large', code: 500 });
}

/** NamespaceLifecycle's refusal of new content in a namespace that is being deleted. */
export function namespaceTerminating(ref: ResourceRef, name: string, namespace: string): StatusBody {
  const details = resourceDetails(ref, name);
  details.causes = [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }];
  return failure(
    403,
    'Forbidden',
    `${qualifiedResource(ref)} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    details,
  );
}

/**
 * admission.NewForbidden with its reason and code replaced and the message added as a cause:
 * how the ValidatingAdmissionPolicy plugin answers a denial.
 */
export function policyDenial(ref: ResourceRef, name: string, message: string, reason: string, code: number): StatusBody {
  const details = resourceDetails(ref, name);
  details.causes = [{ message }];
  const target = name === '' ? qualifiedResource(ref) : `${qualifiedResource(ref)} "${name}"`;
  return failure(code, reason, `${target} is forbidden: ${message}`, details);
}
