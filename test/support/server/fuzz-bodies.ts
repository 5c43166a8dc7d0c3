/**
 * Generators of hostile AdmissionReview bodies (fast-check) and the check every answer to one
 * must pass. Shared by test/fuzz-review-path.test.ts and the hostile-client run in bench/hostile.ts.
 */
import fc from 'fast-check';
import { podReview } from './server-harness.js';

type Json = unknown;

/** Replaces the value at a random path of `base` with `value`. */
function mutateAt(base: Json, path: readonly number[], value: Json): Json {
  if (path.length === 0 || base === null || typeof base !== 'object') return value;
  const copy: Record<string, Json> | Json[] = Array.isArray(base) ? [...base] : { ...(base as Record<string, Json>) };
  const keys = Object.keys(copy);
  if (keys.length === 0) return value;
  const key = keys[path[0]! % keys.length]!;
  (copy as Record<string, Json>)[key] = mutateAt((copy as Record<string, Json>)[key], path.slice(1), value);
  return copy;
}

const deepNesting = fc.integer({ min: 1, max: 5000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth));
/** A valid review whose object has something replaced deep inside: reaches the handlers. */
const objectMutations = fc.tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 5 }), fc.jsonValue({ maxDepth: 4 })).map(([path, value]) => {
  const review = podReview() as { request: { object: Json } };
  review.request.object = mutateAt(review.request.object, path, value);
  return JSON.stringify(review);
});
const jsonBodies = fc.oneof(
  { weight: 6, arbitrary: objectMutations },
  { weight: 5, arbitrary: fc.tuple(fc.array(fc.nat(), { maxLength: 6 }), fc.jsonValue({ maxDepth: 4 })).map(([path, value]) => JSON.stringify(mutateAt(podReview(), path, value))) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: fc.string({ minLength: 10_000, maxLength: 200_000 }).map((s) => JSON.stringify(mutateAt(podReview(), [5, 3], s))) },
  { weight: 1, arbitrary: deepNesting },
);
/** Request bodies: valid-looking JSON reviews, truncated ones, and random bytes. */
export const rawBodies = fc.oneof(
  { weight: 4, arbitrary: jsonBodies.map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: fc.tuple(jsonBodies, fc.double({ min: 0, max: 1, noNaN: true })).map(([text, cut]) => Buffer.from(text.slice(0, Math.floor(text.length * cut)))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2000 }).map((bytes) => Buffer.from(bytes)) },
);

/** Undefined when the answer to `body` is a contract-valid review or a 4xx with a reason; else what is wrong. */
export function checkAnswer(body: Buffer, status: number, json: unknown, text: string): string | undefined {
  if (status >= 400 && status < 500) {
    return typeof (json as { error?: unknown })?.error === 'string' && (json as { error: string }).error.length > 0 ? undefined : `4xx without a reason: ${text.slice(0, 200)}`;
  }
  if (status !== 200) return `HTTP ${status}: ${text.slice(0, 200)}`;
  const sent = JSON.parse(body.toString('utf8')) as { apiVersion: string; request: { uid: string } };
  const review = json as { apiVersion?: string; kind?: string; response?: { uid?: string; allowed?: unknown; patch?: string; patchType?: string } };
  if (review?.kind !== 'AdmissionReview' || review.apiVersion !== sent.apiVersion) return `wrong apiVersion/kind: ${text.slice(0, 200)}`;
  if (review.response?.uid !== sent.request.uid) return 'uid not echoed';
  if (typeof review.response.allowed !== 'boolean') return 'allowed is not a boolean';
  if ((review.response.patch === undefined) !== (review.response.patchType === undefined)) return 'patch and patchType must come together';
  return undefined;
}
