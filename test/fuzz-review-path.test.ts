import t from 'tap';
import fc from 'fast-check';
import { Agent } from 'node:https';
import { applyPatch } from '../src/admission/patch.js';
import { checkAnswer, rawBodies } from './support/server/fuzz-bodies.js';
import { createTestCa, mutating, podReview, request, serve, validating } from './support/server/server-harness.js';

/**
 * Property-based fuzzing of the whole request path over real TLS: mutated and generated
 * AdmissionReviews, wrong types in any field, deep nesting, long strings, invalid UTF-8 and
 * truncated bodies. Every answer must be a contract-valid review (HTTP 200, the caller's
 * apiVersion, the same uid) or a 4xx with a reason, and the server must keep serving.
 * FUZZ_RUNS raises the number of cases for a longer run (default 300).
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 300);

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
