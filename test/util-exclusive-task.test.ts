// One task at a time: a replacement starts only after the task it replaces has finished.
import t from 'tap';
import { ExclusiveTask, type Task } from '../src/util/exclusive-task.js';

/** A task that runs until aborted, then takes `stopMs` to wind down; it records what overlapped. */
function recorder() {
  let running = 0;
  let most = 0;
  const events: string[] = [];
  const task =
    (name: string, stopMs = 20): Task =>
    async (signal) => {
      running++;
      most = Math.max(most, running);
      events.push(`${name} start${signal.aborted ? ' (aborted)' : ''}`);
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await new Promise((resolve) => setTimeout(resolve, stopMs));
      running--;
      events.push(`${name} end`);
    };
  return { task, events, most: () => most };
}

t.test('replace aborts the running task and waits for it before starting the next', async (t) => {
  const stuck: number[] = [];
  const tasks = new ExclusiveTask({ stopTimeoutMs: 5000, onStuck: (ms) => stuck.push(ms) });
  const { task, events, most } = recorder();
  const lifetime = new AbortController();
  void tasks.replace(task('a', 100), lifetime.signal);
  await new Promise((resolve) => setTimeout(resolve, 10));
  const b = tasks.replace(task('b'), lifetime.signal);
  const c = tasks.replace(task('c'), lifetime.signal);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.same(events, ['a start', 'a end', 'b start (aborted)', 'b end', 'c start'], 'b was replaced before it ran: it gets an aborted signal, c the live one');
  t.equal(most(), 1, 'never two at once');
  await tasks.stop();
  await Promise.all([b, c]);
  t.same(events.slice(-1), ['c end']);
  t.same(stuck, []);
});

t.test('a task that ignores its abort holds the next one back only for stopTimeoutMs, and is reported', async (t) => {
  const stuck: number[] = [];
  const tasks = new ExclusiveTask({ stopTimeoutMs: 200, onStuck: (ms) => stuck.push(ms) });
  const lifetime = new AbortController();
  let release = (): void => undefined;
  void tasks.replace(() => new Promise<void>((resolve) => (release = resolve)), lifetime.signal);
  const started = performance.now();
  await tasks.stop();
  t.ok(performance.now() - started >= 190, 'waited for it');
  t.equal(stuck.length, 1, 'reported as stuck');
  release();
});

t.test('the parent signal aborts the running task too', async (t) => {
  const tasks = new ExclusiveTask({ stopTimeoutMs: 1000, onStuck: () => undefined });
  const { task, events } = recorder();
  const lifetime = new AbortController();
  const done = tasks.replace(task('a'), lifetime.signal);
  lifetime.abort();
  await done;
  t.same(events, ['a start', 'a end']);
});
