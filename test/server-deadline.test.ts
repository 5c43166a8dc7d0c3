import t from 'tap';
import { answerBudgetMs, callerTimeoutMs } from '../src/server/review/review.js';
import { parseDuration as parseGoDurationMs } from '../src/config/duration.js';

t.test('Go durations as kube-apiserver writes them', async (t) => {
  t.equal(parseGoDurationMs('10s'), 10_000);
  t.equal(parseGoDurationMs('5s'), 5000);
  t.equal(parseGoDurationMs('1m30s'), 90_000);
  t.equal(parseGoDurationMs('1.5s'), 1500);
  t.equal(parseGoDurationMs('250ms'), 250);
  t.equal(parseGoDurationMs('1h'), 3_600_000);
  t.equal(parseGoDurationMs('1500us'), 1.5);
  t.equal(parseGoDurationMs('0'), 0);
  for (const bad of ['', '10', 's', '-5s', '10 s', '5x', 'abc', '1s2']) t.equal(parseGoDurationMs(bad), undefined, `"${bad}" refused`);
});

t.test('the answer budget leaves a margin of 10%, at least 100 ms, at most 1 s, at most half', async (t) => {
  t.equal(answerBudgetMs(10_000), 9000);
  t.equal(answerBudgetMs(30_000), 29_000, 'margin capped at 1 s');
  t.equal(answerBudgetMs(5000), 4500);
  t.equal(answerBudgetMs(1000), 900, 'margin at least 100 ms');
  t.equal(answerBudgetMs(150), 75, 'never more than half the timeout');
  t.equal(answerBudgetMs(0), 0);
});

t.test('the caller timeout comes from ?timeout=, else timeoutSeconds, never above 30 s', async (t) => {
  t.equal(callerTimeoutMs('5s', 10), 5000);
  t.equal(callerTimeoutMs(undefined, 10), 10_000);
  t.equal(callerTimeoutMs('garbage', 3), 3000, 'an unreadable value falls back to the webhook');
  t.equal(callerTimeoutMs('0s', 3), 3000, 'zero falls back too');
  t.equal(callerTimeoutMs('10m', 10), 30_000);
});
