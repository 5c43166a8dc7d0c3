/** The AdmissionReview request body (contract section 1), with its Go field order. */
import { randomUUID } from 'node:crypto';
import type { AdmitRequest, UserInfo } from './types.js';
import type { KubeObject } from '../fake-apiserver/index.js';

export type ReviewVersion = 'v1' | 'v1beta1';

export const DEFAULT_USER: UserInfo = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };

const OPTIONS_KIND: Record<string, string | undefined> = {
  CREATE: 'CreateOptions',
  UPDATE: 'UpdateOptions',
  DELETE: 'DeleteOptions',
};

/** The first of the webhook's versions that the apiserver speaks, or undefined (a call error). */
export function chooseReviewVersion(versions: readonly string[] | undefined): ReviewVersion | undefined {
  return (versions ?? []).find((v): v is ReviewVersion => v === 'v1' || v === 'v1beta1');
}

export function defaultOptions(request: AdmitRequest): Record<string, unknown> | null {
  if (request.options !== undefined) return request.options;
  const kind = OPTIONS_KIND[request.operation];
  return kind ? { kind, apiVersion: 'meta.k8s.io/v1' } : null;
}

function userInfoJson(user: UserInfo): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  if (user.username) json.username = user.username;
  if (user.uid) json.uid = user.uid;
  if (user.groups && user.groups.length > 0) json.groups = user.groups;
  if (user.extra && Object.keys(user.extra).length > 0) json.extra = user.extra;
  return json;
}

export interface ReviewContext {
  namespace: string;
  name: string;
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
}

export function buildReview(version: ReviewVersion, request: AdmitRequest, context: ReviewContext): { uid: string; body: string } {
  const uid = randomUUID();
  const inner: Record<string, unknown> = {
    uid,
    kind: request.kind,
    resource: request.resource,
  };
  if (request.subResource) inner.subResource = request.subResource;
  inner.requestKind = request.kind;
  inner.requestResource = request.resource;
  if (request.subResource) inner.requestSubResource = request.subResource;
  if (context.name) inner.name = context.name;
  if (context.namespace) inner.namespace = context.namespace;
  inner.operation = request.operation;
  inner.userInfo = userInfoJson(request.userInfo ?? DEFAULT_USER);
  inner.object = context.object ?? null;
  inner.oldObject = context.oldObject ?? null;
  inner.dryRun = request.dryRun ?? false;
  inner.options = defaultOptions(request);
  const review = { apiVersion: `admission.k8s.io/${version}`, kind: 'AdmissionReview', request: inner };
  return { uid, body: JSON.stringify(review) };
}
