import { once } from 'node:events';
import https from 'node:https';
import t from 'tap';
import type { FailurePolicy } from '../src/admission/types.js';
import { createTestCa, mutating, podReview, request, serve, validating, type ReviewResponse } from './support/server/server-harness.js';

const ca = createTestCa();
const signals: AbortSignal[] = [];

function hooksFor(policy: FailurePolicy) {
  const p = policy.toLowerCase();
  return [
    // Ignores its signal and never answers: the server must answer for it.
    validating(`hang-${p}`, () => new Promise<never>(() => undefined), { failurePolicy: policy }),
    // Waits for its signal, as a well-behaved slow handler does.
    validating(
      `slow-${p}`,
      async (_req, context) => {
        signals.push(context.signal);
        await once(context.signal, 'abort');
        return { allowed: true };
      },
      { failurePolicy: policy, timeoutSeconds: 1 },
    ),
    validating(
      `throw-${p}`,
      () => {
        throw new Error('database password is hunter2');
      },
      { failurePolicy: policy },
    ),
    validating(`reject-${p}`, async () => Promise.reject(new Error('async failure')), { failurePolicy: policy }),
    validating(`nonsense-${p}`, () => ({ verdict: 'yes' }) as never, { failurePolicy: policy }),
    validating(`no-message-${p}`, () => ({ allowed: false }) as never, { failurePolicy: policy }),
    mutating(`bad-object-${p}`, () => ({ allowed: true, object: 'pod' }) as never, { failurePolicy: policy }),
  ];
}

const served = await serve([...hooksFor('Fail'), ...hooksFor('Ignore')], { ca });
// Keep-alive, warmed up below: the timings then measure the server, not a TLS handshake on a busy machine.
const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
t.teardown(async () => {
  agent.destroy();
  await served.server.close(2000);
});

async function timedReview(path: string) {
  await request(served.port, '/validate/nonsense-ignore', podReview(), { ca: ca.certPem, agent });
  const started = performance.now();
  const result = await request(served.port, path, podReview(), { ca: ca.certPem, agent });
  return { status: result.status, review: result.json as ReviewResponse, ms: performance.now() - started };
}

t.test('a hanging handler is answered before ?timeout=2s runs out', async (t) => {
  const fail = await timedReview('/validate/hang-fail?timeout=2s');
  t.equal(fail.status, 200);
  t.ok(fail.ms < 2000, `answered in ${Math.round(fail.ms)} ms, before the caller's 2 s`);
  t.ok(fail.ms > 1500, 'but only once the budget (timeout minus 10% margin) was used');
  t.equal(fail.review.response.allowed, false);
  t.same(fail.review.response.status, {
    code: 500,
    reason: 'InternalError',
    message: 'webhook "hang-fail" could not decide in time (failurePolicy Fail)',
    status: 'Failure',
  });

  const ignore = await timedReview('/validate/hang-ignore?timeout=2s');
  t.ok(ignore.ms < 2000, `answered in ${Math.round(ignore.ms)} ms`);
  t.equal(ignore.review.response.allowed, true);
  t.same(ignore.review.response.warnings, ['webhook "hang-ignore" could not decide in time; allowed by failurePolicy Ignore']);
  t.same(ignore.review.response.auditAnnotations, { 'failed-open': 'timeout' });

  const line = served.logs.lines.find((l) => l.webhook === 'hang-fail' && l.decision === 'timeout');
  t.ok(line, 'the timeout is logged as the decision');
  t.equal(line?.level, 40);
});

t.test('without ?timeout the webhook timeoutSeconds bounds it, and the handler signal aborts', async (t) => {
  signals.length = 0;
  const fail = await timedReview('/validate/slow-fail');
  t.ok(fail.ms < 1000, `answered in ${Math.round(fail.ms)} ms, within timeoutSeconds 1`);
  t.ok(fail.ms > 700, 'after the 900 ms budget, not before');
  t.equal(fail.review.response.allowed, false);
  t.equal(fail.review.response.status?.code, 500);
  t.equal(signals.length, 1, 'the handler read its signal once');
  t.equal(signals[0]?.aborted, true);
  t.equal((signals[0]?.reason as Error).name, 'TimeoutError');

  const ignore = await timedReview('/validate/slow-ignore');
  t.equal(ignore.review.response.allowed, true);
});

t.test('a Go duration with minutes and fractions is understood', async (t) => {
  const result = await timedReview('/validate/hang-ignore?timeout=0m1.2s');
  t.ok(result.ms > 700 && result.ms < 1200, `answered in ${Math.round(result.ms)} ms for 1.2 s`);
  t.equal(result.review.response.allowed, true);
});

for (const kind of ['throw', 'reject', 'nonsense', 'no-message', 'bad-object']) {
  const path = kind === 'bad-object' ? '/mutate' : '/validate';
  t.test(`${kind}: Fail denies with 500, Ignore allows with a warning; the message is logged, not returned`, async (t) => {
    const fail = await timedReview(`${path}/${kind}-fail?timeout=10s`);
    t.equal(fail.status, 200);
    t.ok(fail.ms < 1000, 'answered at once, not at the deadline');
    t.equal(fail.review.response.allowed, false);
    t.same(fail.review.response.status, {
      code: 500,
      reason: 'InternalError',
      message: `webhook "${kind}-fail" failed with an internal error (failurePolicy Fail)`,
      status: 'Failure',
    });
    t.notOk('patch' in fail.review.response);

    const ignore = await timedReview(`${path}/${kind}-ignore?timeout=10s`);
    t.equal(ignore.review.response.allowed, true);
    t.same(ignore.review.response.warnings, [`webhook "${kind}-ignore" failed with an internal error; allowed by failurePolicy Ignore`]);
    t.notOk('patch' in ignore.review.response);

    const line = served.logs.lines.find((l) => l.webhook === `${kind}-fail` && l.decision === 'error');
    t.type(line?.failure, 'string', 'the failure is logged');
    t.notOk(JSON.stringify(fail.review).includes('hunter2'), 'handler error text stays out of the answer');
  });
}

t.test('failurePolicy outcomes are counted as timeout and error', async (t) => {
  const text = await served.metricsRegistry.metrics();
  t.match(text, /kube_admission_requests_total\{webhook="hang-fail",operation="CREATE",decision="timeout"\} 1/);
  t.match(text, /kube_admission_requests_total\{webhook="throw-ignore",operation="CREATE",decision="error"\} 1/);
});
