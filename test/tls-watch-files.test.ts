import t from 'tap';
import { mkdtemp, readdir, readlink, lstat, readFile, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSnapshot, watchFiles, type FileSnapshot } from '../src/util/watch-files.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';

const FILES = ['tls.crt', 'tls.key'];

/** A watch whose changes arrive as awaitable snapshots. */
function observe(dir: string, baselineDigest: string | undefined, extra: { useFsEvents?: boolean; pollIntervalMs?: number } = {}) {
  const controller = new AbortController();
  const seen: FileSnapshot[] = [];
  const waiters: (() => void)[] = [];
  const watch = watchFiles({
    dir,
    files: FILES,
    pollIntervalMs: extra.pollIntervalMs ?? 5_000,
    useFsEvents: extra.useFsEvents,
    settleMs: 30,
    signal: controller.signal,
    baselineDigest,
    onChange: (snapshot) => {
      seen.push(snapshot);
      waiters.splice(0).forEach((wake) => wake());
    },
  });
  const changeCount = (count: number, timeoutMs = 10_000): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`expected ${count} changes, saw ${seen.length}`)), timeoutMs);
      const check = (): void => {
        if (seen.length >= count) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  return { controller, seen, changeCount, closed: watch.closed };
}

const text = (snapshot: FileSnapshot | undefined, name: string): string | undefined => snapshot?.contents.get(name)?.toString('utf8');

t.test('the atomic writer lays the directory out as kubelet does', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-aw-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const writer = new AtomicWriter(dir);
  t.equal(await writer.write({ 'tls.crt': 'one', 'tls.key': 'k1' }), true);
  const first = await readlink(join(dir, '..data'));
  t.match(first, /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\d{9}$/);
  t.equal(await readlink(join(dir, 'tls.crt')), join('..data', 'tls.crt'));
  t.equal(await writer.write({ 'tls.crt': 'one', 'tls.key': 'k1' }), false, 'unchanged payload: nothing written');
  await writer.write({ 'tls.crt': 'two', 'tls.key': 'k2' });
  const second = await readlink(join(dir, '..data'));
  t.not(second, first);
  const entries = (await readdir(dir)).sort();
  t.same(entries, ['..data', second, 'tls.crt', 'tls.key'].sort(), 'old timestamped dir removed, no ..data_tmp left');
  t.ok((await lstat(join(dir, 'tls.key'))).isSymbolicLink());
  await writer.write({ 'tls.crt': 'three' });
  t.same((await readdir(dir)).filter((name) => !name.startsWith('..')), ['tls.crt'], 'a dropped key loses its visible link');
});

t.test('a kubelet-style ..data swap is reported once, with the new content', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-watch-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const writer = new AtomicWriter(dir);
  await writer.write({ 'tls.crt': 'cert-1', 'tls.key': 'key-1' });
  const baseline = await readSnapshot(dir, FILES);
  const watch = observe(dir, baseline.digest);
  await writer.write({ 'tls.crt': 'cert-2', 'tls.key': 'key-2' });
  await watch.changeCount(1);
  t.equal(text(watch.seen[0], 'tls.crt'), 'cert-2');
  t.equal(text(watch.seen[0], 'tls.key'), 'key-2');
  await writer.write({ 'tls.crt': 'cert-3', 'tls.key': 'key-3' });
  await watch.changeCount(2);
  t.equal(text(watch.seen[1], 'tls.crt'), 'cert-3');
  watch.controller.abort();
  await watch.closed;
  t.equal(watch.seen.length, 2, 'nothing else reported');
});

t.test('plain rewrites are seen; a burst is reported once; equal content is not a change', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-watch-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'tls.crt'), 'a');
  await writeFile(join(dir, 'tls.key'), 'a');
  const watch = observe(dir, (await readSnapshot(dir, FILES)).digest);
  await writeFile(join(dir, 'tls.crt'), 'b1');
  await writeFile(join(dir, 'tls.crt'), 'b2');
  await writeFile(join(dir, 'tls.key'), 'b3');
  await watch.changeCount(1);
  t.equal(text(watch.seen[0], 'tls.crt'), 'b2');
  t.equal(text(watch.seen[0], 'tls.key'), 'b3');
  // Same bytes rewritten, then a real change: only the real one is reported.
  await writeFile(join(dir, 'tls.crt'), 'b2');
  await writeFile(join(dir, 'unrelated.txt'), 'noise');
  await writeFile(join(dir, 'tls.key'), 'c');
  await watch.changeCount(2);
  t.equal(text(watch.seen[1], 'tls.key'), 'c');
  watch.controller.abort();
  await watch.closed;
  t.equal(watch.seen.length, 2);
});

t.test('the poll alone finds changes (fs events off), and a missing file reads as undefined', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-watch-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const writer = new AtomicWriter(dir);
  await writer.write({ 'tls.crt': 'p1', 'tls.key': 'p1' });
  const watch = observe(dir, (await readSnapshot(dir, FILES)).digest, { useFsEvents: false, pollIntervalMs: 40 });
  await writer.write({ 'tls.crt': 'p2' });
  await watch.changeCount(1);
  t.equal(text(watch.seen[0], 'tls.crt'), 'p2');
  t.equal(watch.seen[0]?.contents.get('tls.key'), undefined);
  watch.controller.abort();
  await watch.closed;
});

t.test('without a baseline the first content is reported; a directory that appears later is picked up', async (t) => {
  const parent = await mkdtemp(join(tmpdir(), 'kas-watch-'));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  const dir = join(parent, 'later');
  const watch = observe(dir, undefined, { pollIntervalMs: 40 });
  await watch.changeCount(1);
  t.equal(text(watch.seen[0], 'tls.crt'), undefined, 'nothing there yet');
  await new AtomicWriter(dir).write({ 'tls.crt': 'late', 'tls.key': 'late' });
  await watch.changeCount(2);
  t.equal(text(watch.seen[1], 'tls.crt'), 'late');
  watch.controller.abort();
  await watch.closed;
});

t.test('abort releases every handle: closed resolves and no change is reported afterwards', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-watch-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const writer = new AtomicWriter(dir);
  await writer.write({ 'tls.crt': 'x', 'tls.key': 'x' });
  const watch = observe(dir, (await readSnapshot(dir, FILES)).digest, { pollIntervalMs: 20 });
  watch.controller.abort();
  await watch.closed;
  await writer.write({ 'tls.crt': 'y', 'tls.key': 'y' });
  // Several poll intervals pass: a leaked interval or fs watcher would report the change.
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.equal(watch.seen.length, 0);
  const preAborted = watchFiles({ dir, files: FILES, pollIntervalMs: 10, signal: AbortSignal.abort(), onChange: () => undefined });
  await preAborted.closed;
  t.pass('a watch started on an aborted signal closes at once');
});

t.test('a failing onChange is reported to onError and the watch goes on', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-watch-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'tls.crt'), '1');
  const controller = new AbortController();
  const errors: unknown[] = [];
  const contents: string[] = [];
  const waiters: (() => void)[] = [];
  const until = (count: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`saw ${contents.length} changes, wanted ${count}`)), 10_000);
      const check = (): void => {
        if (contents.length >= count) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  const watch = watchFiles({
    dir,
    files: FILES,
    pollIntervalMs: 30,
    settleMs: 10,
    signal: controller.signal,
    baselineDigest: (await readSnapshot(dir, FILES)).digest,
    onChange: (snapshot) => {
      contents.push(text(snapshot, 'tls.crt') ?? '');
      waiters.splice(0).forEach((wake) => wake());
      if (contents.length === 1) throw new Error('handler broke');
    },
    onError: (error) => errors.push(error),
  });
  await writeFile(join(dir, 'tls.crt'), '2');
  await until(1);
  await writeFile(join(dir, 'tls.crt'), '3');
  await until(2);
  t.same(contents, ['2', '3']);
  t.match(errors, [{ message: 'handler broke' }]);
  controller.abort();
  await watch.closed;
});

t.test('a snapshot is one published version: a ..data swap between two reads is read again, whole', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'snapshot-swap-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const writer = new AtomicWriter(dir);
  await writer.write({ 'tls.crt': 'crt v1', 'tls.key': 'key v1' });
  let swaps = 0;
  let version = 1;
  // kubelet publishes the next version right after the first file of a set was read.
  const swapAfterFirstFile = (maxSwaps: number) => async (path: string): Promise<Buffer> => {
    const content = await readFile(path);
    if (path.endsWith('tls.crt') && swaps < maxSwaps) {
      swaps++;
      version++;
      await writer.write({ 'tls.crt': `crt v${version}`, 'tls.key': `key v${version}` });
    }
    return content;
  };
  const text = (snapshot: FileSnapshot): string[] => FILES.map((name) => snapshot.contents.get(name)?.toString() ?? '');

  const once = await readSnapshot(dir, FILES, swapAfterFirstFile(1));
  t.same(text(once), ['crt v2', 'key v2'], 'read again after the swap: one version, not crt v1 with key v2');

  swaps = 0;
  const always = await readSnapshot(dir, FILES, swapAfterFirstFile(Number.POSITIVE_INFINITY));
  t.equal(swaps, 5, 'a writer that never stops gets five reads, then the last is returned (validation decides)');
  t.equal(text(always).length, 2);

  const plain = await mkdtemp(join(tmpdir(), 'snapshot-plain-'));
  t.teardown(() => rm(plain, { recursive: true, force: true }));
  await writeFile(join(plain, 'tls.crt'), 'crt');
  await writeFile(join(plain, 'tls.key'), 'key');
  t.same(text(await readSnapshot(plain, FILES)), ['crt', 'key'], 'a directory without ..data is read once, as it is');
});
