import t from 'tap';
import pino from 'pino';
import { shutdown, type ShutdownParts } from '../src/lifecycle/shutdown.js';

const logger = pino({ level: 'silent' });

function recordingParts(overrides: Partial<ShutdownParts> = {}) {
  const events: string[] = [];
  const parts: ShutdownParts = {
    beginShutdown: () => events.push('shutdown-begun'),
    teardown: async () => {
      events.push('teardown');
      return { outcome: 'ok' };
    },
    closeServer: async () => {
      events.push('close');
      return { outcome: 'ok' };
    },
    releaseLease: async () => {
      events.push('release');
      return { outcome: 'ok' };
    },
    closeRest: async () => {
      events.push('rest');
    },
    ...overrides,
  };
  return { parts, events };
}

t.test('steps run in the design order and the summary is ok', async (t) => {
  const { parts, events } = recordingParts();
  const result = await shutdown(parts, { delayMs: 0, timeoutMs: 5000, logger });
  t.equal(result.ok, true);
  t.same(events.slice(0, 2), ['shutdown-begun', 'teardown']);
  t.ok(events.indexOf('close') > events.indexOf('teardown'), 'the server closes only after the deletions');
  t.ok(events.includes('release'));
  t.equal(events.at(-1), 'rest');
  t.same(result.steps.map((s) => s.step), ['teardown', 'server-close', 'lease-release']);
});

t.test('a hanging teardown is cut at the deadline minus one second, and the close still runs', async (t) => {
  let closeBudget = -1;
  let teardownSignal: AbortSignal | undefined;
  const { parts } = recordingParts({
    teardown: (signal) => {
      teardownSignal = signal;
      return new Promise(() => {});
    },
    closeServer: async (budgetMs) => {
      closeBudget = budgetMs;
      return { outcome: 'ok' };
    },
  });
  const started = performance.now();
  const result = await shutdown(parts, { delayMs: 0, timeoutMs: 1500, logger });
  const elapsed = performance.now() - started;
  t.equal(result.ok, false);
  t.equal(result.steps[0]?.outcome, 'timed-out');
  t.ok(teardownSignal?.aborted, 'the teardown was told to stop');
  t.ok(result.steps[0]!.ms >= 450 && result.steps[0]!.ms < 1200, `teardown took ${result.steps[0]!.ms} ms of its 500 ms budget`);
  t.ok(closeBudget > 700, `the close got the remaining second (${closeBudget} ms)`);
  t.ok(elapsed < 1500 + 500, `whole shutdown ${Math.round(elapsed)} ms stays within the deadline plus slack`);
});

t.test('the delay keeps serving; a failing step makes the summary fail', async (t) => {
  const { parts, events } = recordingParts({
    closeServer: async () => {
      throw new Error('sockets would not close');
    },
  });
  const result = await shutdown(parts, { delayMs: 100, timeoutMs: 2000, logger });
  t.equal(result.steps[0]?.step, 'delay');
  t.ok(result.steps[0]!.ms >= 90);
  t.equal(result.ok, false);
  t.match(result.steps.find((s) => s.step === 'server-close'), { outcome: 'failed', detail: 'sockets would not close' });
  t.same(events.slice(0, 2), ['shutdown-begun', 'teardown']);
});

t.test('the teardown starts at SIGTERM, alongside the delay, not after it; the close waits for both and for the grace', async (t) => {
  // Scaled to zero or uninstalled: every endpoint leaves the Service at SIGTERM, so the
  // configurations must go at once, not after the delay (found by the chaos exploration, seed 101).
  const began = performance.now();
  const times: Record<string, number> = {};
  const { parts } = recordingParts({
    teardown: async () => {
      times['deleted'] = performance.now() - began;
      return { outcome: 'ok' };
    },
    closeServer: async () => {
      times['close'] = performance.now() - began;
      return { outcome: 'ok' };
    },
  });
  const result = await shutdown(parts, { delayMs: 600, timeoutMs: 5000, graceAfterTeardownMs: 300, logger });
  t.ok(times['deleted']! < 300, `deleted ${Math.round(times['deleted']!)} ms after SIGTERM, well inside the 600 ms delay`);
  t.ok(times['close']! >= 590, `closed after the delay (${Math.round(times['close']!)} ms)`);
  t.match(result.steps.map((s) => s.step), ['delay', 'teardown', 'teardown-grace', 'server-close', 'lease-release']);
  t.ok(result.steps.find((s) => s.step === 'teardown-grace')!.ms < 250, 'the delay already served the grace');

  const longGrace = await shutdown(recordingParts().parts, { delayMs: 200, timeoutMs: 5000, graceAfterTeardownMs: 700, logger });
  const grace = longGrace.steps.find((s) => s.step === 'teardown-grace')!;
  t.ok(grace.ms >= 400, `the rest of a grace longer than the delay is served after it (${grace.ms} ms)`);
});

t.test('nothing registered: teardown skipped', async (t) => {
  const { parts, events } = recordingParts({ teardown: undefined, releaseLease: undefined });
  const result = await shutdown(parts, { delayMs: 0, timeoutMs: 2000, logger });
  t.equal(result.ok, true);
  t.notOk(events.includes('teardown'));
  t.match(result.steps, [{ step: 'teardown', outcome: 'skipped' }, { step: 'server-close', outcome: 'ok' }, { step: 'lease-release', outcome: 'skipped' }]);
});

t.test('after a teardown that deleted, the server keeps serving for the grace before it closes, cut to leave the close its second', async (t) => {
  const times: Record<string, number> = {};
  const { parts } = recordingParts({
    teardown: async () => {
      times['deleted'] = performance.now();
      return { outcome: 'ok' };
    },
    closeServer: async (budgetMs) => {
      times['close'] = performance.now();
      times['closeBudget'] = budgetMs;
      return { outcome: 'ok' };
    },
  });
  const result = await shutdown(parts, { delayMs: 0, timeoutMs: 5000, graceAfterTeardownMs: 300, logger });
  t.ok(times['close']! - times['deleted']! >= 295, `closed ${Math.round(times['close']! - times['deleted']!)} ms after the deletions`);
  t.match(result.steps.map((s) => s.step), ['teardown', 'teardown-grace', 'server-close', 'lease-release']);

  const short = await shutdown(recordingParts().parts, { delayMs: 0, timeoutMs: 1600, graceAfterTeardownMs: 3000, logger });
  const grace = short.steps.find((s) => s.step === 'teardown-grace');
  t.ok(grace && grace.ms >= 500 && grace.ms < 1000, `within a 1.6 s deadline the grace is cut to about 0.6 s (${grace?.ms} ms)`);

  const failed = await shutdown(recordingParts({ teardown: async () => ({ outcome: 'failed' }) }).parts, { delayMs: 0, timeoutMs: 5000, graceAfterTeardownMs: 3000, logger });
  t.notOk(failed.steps.some((s) => s.step === 'teardown-grace'), 'no grace when the teardown did not delete');
  const kept = await shutdown(recordingParts({ teardown: async () => ({ outcome: 'skipped' }) }).parts, { delayMs: 0, timeoutMs: 5000, graceAfterTeardownMs: 3000, logger });
  t.notOk(kept.steps.some((s) => s.step === 'teardown-grace'), 'nor when it kept the configurations');
});
