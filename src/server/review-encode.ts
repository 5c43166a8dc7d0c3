import type { PatchOperation } from '../admission/patch.js';
import type { ReviewApiVersion } from './review-decode.js';

/** How a review ended, for logs and metrics. timeout/error are answered by failurePolicy. */
export type ReviewDecision = 'allowed' | 'denied' | 'timeout' | 'error';

export interface DenialStatus {
  code: number;
  message: string;
  reason?: string;
}

/** The answer to one review, already cleaned (warnings, annotations) and checked (patch only when allowed to). */
export interface Verdict {
  decision: ReviewDecision;
  allowed: boolean;
  status?: DenialStatus;
  /** Non-empty when present. */
  patch?: PatchOperation[];
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

interface AdmissionResponseBody {
  uid: string;
  allowed: boolean;
  status?: DenialStatus & { status: 'Failure' };
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/**
 * UTF-8 then base64. A patch is nearly always ASCII (a string whose UTF-8 is as long as it is),
 * and btoa() encodes that without the Buffer that Buffer.from() takes from its pool per answer.
 */
function base64(text: string): string {
  return Buffer.byteLength(text) === text.length ? btoa(text) : Buffer.from(text).toString('base64');
}

/** The AdmissionReview JSON answering `uid`, in the caller's apiVersion (HTTP 200 whatever the verdict). */
export function encodeReview(apiVersion: ReviewApiVersion, uid: string, verdict: Verdict): string {
  const response: AdmissionResponseBody = { uid, allowed: verdict.allowed };
  if (!verdict.allowed && verdict.status) response.status = { ...verdict.status, status: 'Failure' };
  if (verdict.patch && verdict.patch.length > 0) {
    response.patch = base64(JSON.stringify(verdict.patch));
    response.patchType = 'JSONPatch';
  }
  if (verdict.warnings && verdict.warnings.length > 0) response.warnings = verdict.warnings;
  if (verdict.auditAnnotations && Object.keys(verdict.auditAnnotations).length > 0) {
    response.auditAnnotations = verdict.auditAnnotations;
  }
  return JSON.stringify({ apiVersion, kind: 'AdmissionReview', response });
}
