import type { AdmissionRequest, KubeObject, Operation } from '../admission/types.js';

export const ADMISSION_V1 = 'admission.k8s.io/v1';
export const ADMISSION_V1BETA1 = 'admission.k8s.io/v1beta1';
export type ReviewApiVersion = typeof ADMISSION_V1 | typeof ADMISSION_V1BETA1;

export interface DecodedReview {
  apiVersion: ReviewApiVersion;
  request: AdmissionRequest;
}

/** A body that is not a usable AdmissionReview: answered 400 with `message`. */
export class InvalidReviewError extends Error {
  override readonly name = 'InvalidReviewError';
  readonly statusCode = 400;
}

const OPERATIONS: ReadonlySet<string> = new Set<Operation>(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(message: string): never {
  throw new InvalidReviewError(message);
}

function objectOrNull(value: unknown, field: string): KubeObject | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) fail(`request.${field} must be an object or null`);
  return value as KubeObject;
}

function checkApiVersion(body: Record<string, unknown>): ReviewApiVersion {
  const { apiVersion, kind } = body;
  if (apiVersion !== ADMISSION_V1 && apiVersion !== ADMISSION_V1BETA1) {
    fail(
      `unsupported apiVersion ${JSON.stringify(apiVersion ?? null)}: expected "${ADMISSION_V1}" or "${ADMISSION_V1BETA1}"`,
    );
  }
  if (kind !== 'AdmissionReview') fail(`kind must be "AdmissionReview", got ${JSON.stringify(kind ?? null)}`);
  return apiVersion;
}

function checkRequest(raw: unknown): AdmissionRequest {
  if (raw === undefined || raw === null) fail('AdmissionReview has no request');
  if (!isRecord(raw)) fail('request must be an object');
  if (typeof raw.uid !== 'string' || raw.uid === '') fail('request.uid is missing or empty');
  if (typeof raw.operation !== 'string' || !OPERATIONS.has(raw.operation)) {
    fail(`request.operation must be one of CREATE, UPDATE, DELETE, CONNECT, got ${JSON.stringify(raw.operation ?? null)}`);
  }
  if (!isRecord(raw.kind) || typeof raw.kind.kind !== 'string') fail('request.kind must be a {group, version, kind} object');
  if (raw.dryRun !== undefined && typeof raw.dryRun !== 'boolean') fail('request.dryRun must be a boolean');
  // The request object is used as it came, with the nullable fields normalised (no copy on the hot path).
  raw.object = objectOrNull(raw.object, 'object');
  raw.oldObject = objectOrNull(raw.oldObject, 'oldObject');
  raw.dryRun = raw.dryRun === true;
  if (!isRecord(raw.userInfo)) raw.userInfo = {};
  return raw as unknown as AdmissionRequest;
}

/** Checks that `body` (parsed JSON) is an AdmissionReview kube-apiserver could have sent; throws InvalidReviewError saying what is wrong. */
export function decodeReview(body: unknown): DecodedReview {
  if (!isRecord(body)) fail('body must be a JSON object (an AdmissionReview)');
  const apiVersion = checkApiVersion(body);
  return { apiVersion, request: checkRequest(body.request) };
}
