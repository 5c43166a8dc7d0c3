import t from 'tap';
import { backoffDelay, retryWithBackoff } from '../src/util/backoff.js';
import { sleep, withTimeout, isAbortError } from '../src/util/abort.js';

t.test('backoffDelay grows exponentially, is capped and jittered within bounds', async (t) => {
  const opts = { initialMs: 100, maxMs: 2000, jitter: 0.2 };
  t.equal(backoffDelay(0, opts, () => 0.5), 100);
  t.equal(backoffDelay(3, opts, () => 0.5), 800);
  t.equal(backoffDelay(10, opts, () => 0.5), 2000);
  t.equal(backoffDelay(0, opts, () => 0), 80);
  t.equal(backoffDelay(0, opts, () => 1), 120);
});

t.test('retryWithBackoff retries until success and gives up after maxAttempts', async (t) => {
  let calls = 0;
  const value = await retryWithBackoff(
    async () => {
      calls++;
      if (calls < 3) throw new Error('transient');
      return 'ok';
    },
    { initialMs: 1, maxMs: 2, maxAttempts: 5 },
  );
  t.equal(value, 'ok');
  t.equal(calls, 3);

  let attempts = 0;
  await t.rejects(
    retryWithBackoff(
      async () => {
        attempts++;
        throw new Error('always');
      },
      { initialMs: 1, maxMs: 2, maxAttempts: 4 },
    ),
    { message: 'always' },
  );
  t.equal(attempts, 4);
});

t.test('retryWithBackoff stops at once on a non-retryable error or an abort', async (t) => {
  let attempts = 0;
  await t.rejects(
    retryWithBackoff(
      async () => {
        attempts++;
        throw new Error('fatal');
      },
      { initialMs: 1, maxMs: 2, maxAttempts: 10, retryable: () => false },
    ),
  );
  t.equal(attempts, 1);

  const controller = new AbortController();
  const pending = retryWithBackoff(
    async () => {
      throw new Error('transient');
    },
    { initialMs: 10_000, maxMs: 10_000, maxAttempts: 10, signal: controller.signal },
  );
  setImmediate(() => controller.abort(new Error('stopping')));
  await t.rejects(pending, { message: 'stopping' });
});

t.test('sleep and withTimeout honour their signals', async (t) => {
  const controller = new AbortController();
  const slept = sleep(10_000, controller.signal);
  controller.abort(new Error('cancelled'));
  await t.rejects(slept, { message: 'cancelled' });

  const error = await withTimeout(20, undefined, () => new Promise(() => {})).catch((e: unknown) => e);
  t.ok(isAbortError(error), 'a hanging operation rejects with a TimeoutError at the deadline');
  t.equal(await withTimeout(1000, undefined, async () => 42), 42);
});

t.test('retryWithBackoff waits at least what the failure asks for (Retry-After), never less than its backoff', async (t) => {
  const waits: number[] = [];
  let calls = 0;
  await retryWithBackoff(
    async () => {
      if (++calls < 3) throw Object.assign(new Error('busy'), { askedMs: calls === 1 ? 120 : 0 });
    },
    { initialMs: 10, maxMs: 20, jitter: 0, maxAttempts: 5, retryAfterMs: (error) => (error as { askedMs: number }).askedMs, onRetry: (_e, _a, delayMs) => waits.push(delayMs) },
  );
  t.same(waits, [120, 20], 'the asked wait when longer, the backoff otherwise');
});
