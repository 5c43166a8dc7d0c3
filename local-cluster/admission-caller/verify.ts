/**
 * The response checks of VerifyAdmissionResponse (contract 2.2 to 2.4). A failure is a call error
 * ("received invalid webhook response: ..."), so failurePolicy applies.
 */
import { isRecord } from '../fake-apiserver/objects.js';
import type { ReviewVersion } from './review.js';

export interface VerifiedResponse {
  allowed: boolean;
  status: Record<string, unknown> | undefined;
  /** Decoded patch bytes (JSON text), mutating only. */
  patch: string | undefined;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

export class InvalidResponseError extends Error {}

/** The body did not decode at all (bad base64 breaks the whole decode): a plain call failure. */
export class UndecodableResponseError extends Error {}

function groupVersionKindText(apiVersion: unknown, kind: unknown): string {
  const version = typeof apiVersion === 'string' ? apiVersion : '';
  const slash = version.indexOf('/');
  const group = slash < 0 ? '' : version.slice(0, slash);
  const ver = slash < 0 ? version : version.slice(slash + 1);
  return `${group}/${ver}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

/** Go decodes []byte from standard, padded base64 and refuses anything else. */
export function decodeStrictBase64(text: string): Buffer {
  const invalid = text.search(/[^A-Za-z0-9+/=]/);
  if (invalid >= 0) throw new UndecodableResponseError(`illegal base64 data at input byte ${invalid}`);
  if (text.length % 4 !== 0 || /=[^=]/.test(text)) {
    throw new UndecodableResponseError(`illegal base64 data at input byte ${Math.max(0, text.length - (text.length % 4 || 4))}`);
  }
  return Buffer.from(text, 'base64');
}

export function verifyResponse(
  review: unknown,
  expectedUid: string,
  version: ReviewVersion,
  mutating: boolean,
): VerifiedResponse {
  const envelope = isRecord(review) ? review : {};
  const response = envelope.response;
  // Decoding comes before every check: bad base64 fails the decode itself.
  const patchBytes = isRecord(response) && typeof response.patch === 'string' ? decodeStrictBase64(response.patch) : undefined;
  if (!isRecord(response)) throw new InvalidResponseError('webhook response was absent');
  if (version === 'v1') {
    const uid = typeof response.uid === 'string' ? response.uid : '';
    if (uid !== expectedUid) throw new InvalidResponseError(`expected response.uid="${expectedUid}", got "${uid}"`);
    if (envelope.apiVersion !== 'admission.k8s.io/v1' || envelope.kind !== 'AdmissionReview') {
      throw new InvalidResponseError(
        `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${groupVersionKindText(envelope.apiVersion, envelope.kind)}`,
      );
    }
  }
  const patchText = typeof response.patch === 'string' ? response.patch : '';
  const hasPatchType = response.patchType !== undefined && response.patchType !== null;
  const patchType = hasPatchType ? String(response.patchType) : undefined;
  let patch: string | undefined;
  if (mutating) {
    if (version === 'v1') {
      if (patchText !== '' && !hasPatchType) throw new InvalidResponseError('webhook returned response.patch but not response.patchType');
      if (hasPatchType && patchType !== 'JSONPatch') {
        throw new InvalidResponseError(`webhook returned invalid response.patchType of ${JSON.stringify(patchType)}`);
      }
      if (hasPatchType && patchText === '') throw new InvalidResponseError('webhook returned response.patchType but not response.patch');
    }
    // v1beta1 never looks at patchType: a non-empty patch is a JSONPatch.
    if (patchText !== '') patch = patchBytes?.toString('utf8');
  } else if (version === 'v1' && (patchText !== '' || hasPatchType)) {
    throw new InvalidResponseError('validating webhook may not return response.patch/patchType');
  }
  const warnings = Array.isArray(response.warnings) ? response.warnings.map(String) : [];
  const auditAnnotations: Record<string, string> = {};
  if (isRecord(response.auditAnnotations)) {
    for (const [key, value] of Object.entries(response.auditAnnotations)) auditAnnotations[key] = String(value);
  }
  return {
    // A missing `allowed` decodes as false.
    allowed: response.allowed === true,
    status: isRecord(response.status) ? response.status : undefined,
    patch,
    warnings,
    auditAnnotations,
  };
}
