import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { deadlineSignal, isAbortError } from '../src/util/abort.js';

// A real garbage collection between creating the deadline and its expiry: a composite signal
// whose timeout source nothing else references must still fire.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function aborted(signal: AbortSignal, boundMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    // Under load the collections above can outlast the deadline: it may have fired already.
    if (signal.aborted) return resolve(true);
    const timer = setTimeout(() => resolve(false), boundMs);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(true);
    }, { once: true });
  });
}

t.test('deadlineSignal fires after a garbage collection, with or without parent signals', async (t) => {
  const parent = new AbortController();
  const withParent = deadlineSignal(200, parent.signal);
  const alone = deadlineSignal(200);
  const withUndefined = deadlineSignal(200, undefined);
  for (let i = 0; i < 3; i++) {
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const fired = await Promise.all([withParent, alone, withUndefined].map((signal) => aborted(signal, 10_000)));
  t.same(fired, [true, true, true], 'every deadline fired');
  t.equal((withParent.reason as Error).name, 'TimeoutError');
  t.ok(isAbortError(withParent.reason));
  t.equal(parent.signal.aborted, false, 'the parent is not aborted by the deadline');
});

t.test('deadlineSignal follows its parent before the deadline', async (t) => {
  const parent = new AbortController();
  const signal = deadlineSignal(60_000, parent.signal);
  parent.abort(new Error('stopping'));
  t.equal(signal.aborted, true);
  t.equal((signal.reason as Error).message, 'stopping');
});
