import t from 'tap';
import fc from 'fast-check';
import { Agent } from 'node:https';
import { applyPatch } from '../src/policy/patch.js';
import { createTestCa, mutating, podReview, request, serve, validating } from './support/server-harness.js';

/**
 * Property-based fuzzing of the whole request path over real TLS: mutated and generated
 * AdmissionReviews, wrong types in any field, deep nesting, long strings, invalid UTF-8 and
 * truncated bodies. Every answer must be a contract-valid review (HTTP 200, the caller's
 * apiVersion, the same uid) or a 4xx with a reason, and the server must keep serving.
 * FUZZ_RUNS raises the number of cases for a longer run (default 300).
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 300);

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
const rawBodies = fc.oneof(
  { weight: 4, arbitrary: jsonBodies.map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: fc.tuple(jsonBodies, fc.double({ min: 0, max: 1, noNaN: true })).map(([text, cut]) => Buffer.from(text.slice(0, Math.floor(text.length * cut)))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2000 }).map((bytes) => Buffer.from(bytes)) },
);

function checkAnswer(body: Buffer, status: number, json: unknown, text: string): string | undefined {
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

t.test('hostile request bodies get a contract-valid review or a 4xx with a reason, and the server keeps serving', async (t) => {
  const ca = createTestCa();
  const served = await serve(
    [
      validating('check', (request) => (request.object?.metadata?.labels?.['app'] ? { allowed: true } : { allowed: false, message: 'needs an app label' })),
      mutating('label', (request) => {
        if (!request.object || typeof request.object !== 'object') return { allowed: true };
        const object = structuredClone(request.object);
        object.metadata = { ...(typeof object.metadata === 'object' ? object.metadata : {}), labels: { fuzzed: 'true' } };
        return { allowed: true, object };
      }),
    ],
    { ca },
  );
  t.teardown(() => served.server.close(1000));
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  t.teardown(() => agent.destroy());
  const problems: string[] = [];
  const statuses = new Map<number, number>();

  await fc.assert(
    fc.asyncProperty(rawBodies, fc.constantFrom('/validate/check?timeout=5s', '/mutate/label?timeout=5s'), async (body, path) => {
      const reply = await request(served.port, path, undefined, { ca: ca.certPem, raw: body, agent });
      statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
      const problem = checkAnswer(body, reply.status, reply.json, reply.text);
      if (problem) problems.push(`${path} ${body.toString('utf8').slice(0, 120)} -> ${problem}`);
      return problem === undefined;
    }),
    { numRuns: RUNS, seed: Number(process.env['FUZZ_SEED'] ?? 42) },
  );
  t.same(problems, [], 'no answer broke the contract');
  t.ok((statuses.get(200) ?? 0) > RUNS / 10, `reviews answered: ${statuses.get(200)} (the generator reaches the handlers)`);
  t.ok((statuses.get(400) ?? 0) > RUNS / 10, `refused as bad input: ${statuses.get(400)}`);

  const healthy = await request(served.port, '/mutate/label?timeout=5s', podReview(), { ca: ca.certPem });
  t.equal(healthy.status, 200, 'a well-formed review is still answered');
  const response = (healthy.json as { response: { patch: string } }).response;
  const patched = applyPatch(podReview()['request'] as { object: unknown }, JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')).map((op: { path: string }) => ({ ...op, path: `/object${op.path}` })));
  t.same((patched as { object: { metadata: { labels: unknown } } }).object.metadata.labels, { fuzzed: 'true' });
});
