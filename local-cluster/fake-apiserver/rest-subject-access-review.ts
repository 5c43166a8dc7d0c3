/**
 * `POST /apis/authorization.k8s.io/v1/subjectaccessreviews`: kube-apiserver's authorizer asked
 * about someone else, as its SubjectAccessReview REST handler answers it. Validated as
 * ValidateSubjectAccessReviewSpec validates it; answered from the RBAC objects of the
 * kube-apiserver that serves the request (its informer cache, so a binding created a moment ago
 * may not count yet there), system:masters always allowed; nothing is stored. The reply is the
 * review with its status: allowed, or no opinion (RBAC never denies), with RBAC's reason.
 */
import { invalidValue, type FieldError } from './field-errors.js';
import { isMaster, type UserInfo } from './identity.js';
import { isRecord, type KubeObject } from './objects.js';
import { Rejection, decodeObject, fail, type ApiRequest, type Reply } from './rest-common.js';
import { invalid } from './status.js';
import { rbacDecision, type RbacObjects, type RbacRequest } from './store-rbac.js';

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

function specErrors(spec: Record<string, unknown>): FieldError[] {
  const resource = spec.resourceAttributes;
  const nonResource = spec.nonResourceAttributes;
  const errors: FieldError[] = [];
  if (isRecord(resource) && isRecord(nonResource)) errors.push(invalidValue('spec', nonResource, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (!isRecord(resource) && !isRecord(nonResource)) errors.push(invalidValue('spec', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (text(spec.user) === '' && strings(spec.groups).length === 0) errors.push(invalidValue('spec.user', text(spec.user), 'at least one of user or group must be specified'));
  return errors;
}

function requestOf(spec: Record<string, unknown>): RbacRequest {
  if (isRecord(spec.nonResourceAttributes)) return { verb: text(spec.nonResourceAttributes.verb), path: text(spec.nonResourceAttributes.path) };
  const attributes = isRecord(spec.resourceAttributes) ? spec.resourceAttributes : {};
  const optional = (key: string) => (text(attributes[key]) === '' ? {} : { [key]: text(attributes[key]) });
  return { verb: text(attributes.verb), group: text(attributes.group), resource: text(attributes.resource), ...optional('subresource'), ...optional('namespace'), ...optional('name') };
}

export function handleSubjectAccessReview(rbac: RbacObjects, request: ApiRequest): Reply {
  const review = decodeObject(request);
  if (review instanceof Rejection) return review.reply;
  const spec = isRecord(review.spec) ? review.spec : {};
  const errors = specErrors(spec);
  if (errors.length > 0) return fail(invalid({ group: 'authorization.k8s.io', kind: 'SubjectAccessReview' }, '', errors));
  const user: UserInfo = { username: text(spec.user), groups: strings(spec.groups) };
  const decision = isMaster(user) ? { allowed: true, reason: '' } : rbacDecision(rbac, user, requestOf(spec));
  const status = { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) };
  const body: KubeObject = { kind: 'SubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', metadata: {}, spec, status };
  return { status: 201, body };
}
