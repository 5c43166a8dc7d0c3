import t from 'tap';
import { runReview } from '../src/server/review/run-handler.js';
import type { AdmissionContext, AdmissionRequest } from '../src/admission/types.js';
import { podReview, validating } from './support/server/server-harness.js';

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
  // The review timer is unreferenced (only a listening server keeps a process alive): hold the loop here.
  const hold = setInterval(() => undefined, 1000);
  const run = await runReview(webhook, request(), 20);
  clearInterval(hold);
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

t.test('the stop signal ends a pending review at once with the failurePolicy outcome', async (t) => {
  const stop = new AbortController();
  let handlerSignal: AbortSignal | undefined;
  const webhook = validating(
    'hangs',
    (_req, context) => {
      handlerSignal = context.signal;
      return new Promise<never>(() => undefined);
    },
    { failurePolicy: 'Ignore' },
  );
  const pending = runReview(webhook, request(), 60_000, stop.signal);
  stop.abort();
  const run = await pending;
  t.equal(run.verdict.decision, 'timeout');
  t.equal(run.verdict.allowed, true, 'Ignore allows');
  t.equal(handlerSignal?.aborted, true, 'the handler is told to stop');
});
