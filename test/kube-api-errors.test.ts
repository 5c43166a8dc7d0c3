import t from 'tap';
import { describeApiFailure, formatApiFailure, isRetryable, MAX_RETRY_AFTER_MS, retryAfterMs } from '../src/kube/api-errors.js';

t.test('a request deadline is "no answer" (code 0) and retryable, not an HTTP status', (t) => {
  // What callApi rejects with at its deadline; DOMException carries a legacy numeric code (23).
  const timeout = new DOMException('timed out after 5000 ms', 'TimeoutError');
  t.match(describeApiFailure(timeout), { code: 0, reason: 'TimeoutError' });
  t.equal(isRetryable(timeout), true, 'a hanging API is worth another attempt');
  t.equal(formatApiFailure(timeout), 'TimeoutError: timed out after 5000 ms');
  t.end();
});

t.test('an abort (shutdown) is not retried', (t) => {
  const abort = AbortSignal.abort().reason as Error;
  t.match(describeApiFailure(abort), { code: 0, reason: 'AbortError' });
  t.equal(isRetryable(abort), false);
  t.end();
});

t.test('API statuses keep their code', (t) => {
  const unavailable = { code: 503, body: JSON.stringify({ reason: 'ServiceUnavailable', message: 'try later' }), headers: { 'retry-after': '2' } };
  t.same(describeApiFailure(unavailable), { code: 503, reason: 'ServiceUnavailable', message: 'try later', retryAfterSeconds: 2 });
  t.equal(isRetryable(unavailable), true);
  t.equal(isRetryable({ code: 409, body: '{}' }), true);
  t.equal(isRetryable({ code: 403, body: '{}' }), false);
  t.equal(isRetryable(new Error('connect ECONNREFUSED 127.0.0.1:6443')), true);
  t.end();
});

t.test("Retry-After: the header, else the Status's details, only on 429 and 5xx, capped, and read through a wrapping error", (t) => {
  const status = (code: number, details?: Record<string, unknown>) => JSON.stringify({ kind: 'Status', reason: 'TooManyRequests', message: 'slow down', code, ...(details ? { details } : {}) });
  t.equal(retryAfterMs({ code: 429, body: status(429), headers: { 'retry-after': '3' } }), 3000);
  t.equal(retryAfterMs({ code: 429, body: status(429, { retryAfterSeconds: 2 }), headers: {} }), 2000, 'kube-apiserver repeats it in details.retryAfterSeconds');
  t.equal(retryAfterMs({ code: 503, body: status(503), headers: {} }), undefined, 'none asked for');
  t.equal(retryAfterMs({ code: 409, body: status(409), headers: { 'retry-after': '3' } }), undefined, 'not a throttling answer');
  t.equal(retryAfterMs({ code: 503, body: status(503), headers: { 'retry-after': '3600' } }), MAX_RETRY_AFTER_MS, 'an hour is capped');
  t.equal(retryAfterMs(new Error('registering failed', { cause: { code: 429, body: status(429), headers: { 'retry-after': '1' } } })), 1000, 'the cause of a RegistrationError');
  t.end();
});
