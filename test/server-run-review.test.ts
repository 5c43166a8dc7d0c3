import t from 'tap';
import { runReview } from '../src/server/run-review.js';
import type { AdmissionContext, AdmissionRequest } from '../src/policy/types.js';
import { podReview, validating } from './support/server-harness.js';

const request = () => podReview().request as AdmissionRequest;

t.test('a handler that reads its signal only after the budget ran out finds it aborted', async (t) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let lateSignal: AbortSignal | undefined;
  let signalRead!: () => void;
  const read = new Promise<void>((resolve) => (signalRead = resolve));
  const webhook = validating('late-reader', async (_req, context: AdmissionContext) => {
    await released;
    lateSignal = context.signal;
    signalRead();
    return { allowed: true };
  });
  const run = await runReview(webhook, request(), 20);
  t.equal(run.verdict.decision, 'timeout');
  release();
  await read;
  t.equal(lateSignal?.aborted, true);
});

t.test('a handler that finishes in time never sees an aborted signal', async (t) => {
  let signal: AbortSignal | undefined;
  const webhook = validating('quick', async (_req, context) => {
    signal = context.signal;
    return { allowed: true };
  });
  const run = await runReview(webhook, request(), 1000);
  t.equal(run.verdict.decision, 'allowed');
  t.equal(signal?.aborted, false);
});
