// Coalesced, rate-limited report writes (src/reports/report-sync.ts, report-writer.ts,
// write-rate.ts) against an in-memory report API of the test's: a burst of changes is one write,
// what is stored as it would be written is never written again (a new leader resuming included,
// whatever key order the API server keeps), nothing is written while held, a failed write is
// tried again, and the token bucket holds writes back.
import t from 'tap';
import pino from 'pino';
import type { ReportClient, StoredReport } from '../src/reports/report-client.js';
import type { ReportObject } from '../src/reports/report-objects.js';
import { ReportSync } from '../src/reports/report-sync.js';
import { ReportWriter } from '../src/reports/report-writer.js';
import { WriteRate } from '../src/reports/write-rate.js';
import { Pace } from '../src/reports/pace.js';
import { within } from './support/deadline.js';

const silent = pino({ level: 'silent' });

/**
 * The reports as a map with a resourceVersion each, as kube-apiserver keeps custom resources (an
 * update names the version it replaces, or is a 409); every call recorded; `failNext` makes the
 * next write answer 500.
 */
class MemoryReports implements ReportClient {
  readonly stored = new Map<string, Record<string, unknown>>();
  readonly versions = new Map<string, string>();
  readonly calls: string[] = [];
  failNext = 0;
  #version = 1;

  async *list(): AsyncGenerator<StoredReport> {
    for (const [key, body] of this.stored) {
      const [namespace = '', name = ''] = key.split('/');
      yield { namespace, name, resourceVersion: this.versions.get(key) ?? '', body };
    }
  }
  put(key: string, body: Record<string, unknown>): string {
    const version = String(++this.#version);
    this.stored.set(key, body);
    this.versions.set(key, version);
    return version;
  }
  async create(namespace: string, json: string): Promise<string> {
    this.#call(`create ${namespace}`);
    const body = JSON.parse(json) as { metadata: { name: string } };
    const key = `${namespace}/${body.metadata.name}`;
    if (this.stored.has(key)) throw Object.assign(new Error('exists'), { code: 409, body: '{}' });
    return this.put(key, body);
  }
  async replace(namespace: string, name: string, json: string, resourceVersion: string): Promise<string> {
    this.#call(`replace ${namespace}/${name}`);
    const key = `${namespace}/${name}`;
    if (!this.stored.has(key)) throw Object.assign(new Error('not found'), { code: 404, body: '{}' });
    if (this.versions.get(key) !== resourceVersion) throw Object.assign(new Error('conflict'), { code: 409, body: '{}' });
    return this.put(key, JSON.parse(json) as Record<string, unknown>);
  }
  async read(namespace: string, name: string): Promise<StoredReport> {
    const key = `${namespace}/${name}`;
    return { namespace, name, resourceVersion: this.versions.get(key) ?? '', body: this.stored.get(key) ?? {} };
  }
  async delete(namespace: string, name: string): Promise<void> {
    this.#call(`delete ${namespace}/${name}`);
    this.stored.delete(`${namespace}/${name}`);
  }
  #call(what: string): void {
    if (this.failNext > 0) {
      this.failNext--;
      throw Object.assign(new Error('etcd is unhappy'), { code: 500, body: '{}' });
    }
    this.calls.push(what);
  }
}

function report(namespace: string, name: string, results: unknown[]): ReportObject {
  const body = { apiVersion: 'openreports.io/v1alpha1', kind: 'Report', metadata: { name, namespace, labels: { a: '1', b: '2' } }, source: 'kube-admission-server', summary: { pass: results.length }, results };
  return { name, namespace, json: JSON.stringify(body) };
}

interface Harness {
  client: MemoryReports;
  sync: ReportSync;
  builds: string[];
  desired: Map<string, ReportObject[]>;
  stop: AbortController;
  running: Promise<void>;
}

function harness(t: { teardown(fn: () => unknown): void }, client = new MemoryReports(), coalesceMs = 50): Harness {
  const desired = new Map<string, ReportObject[]>();
  const builds: string[] = [];
  const writer = new ReportWriter(client, new WriteRate(1000, 1000), { written: () => undefined }, silent);
  const sync = new ReportSync({
    build: (namespace) => {
      builds.push(namespace);
      return desired.get(namespace) ?? [];
    },
    sync: (namespace, reports, signal) => writer.sync(namespace, reports, signal),
    logger: silent,
    coalesceMs,
    retry: { initialMs: 20, maxMs: 40 },
  });
  const stop = new AbortController();
  const running = sync.run(stop.signal);
  t.teardown(async () => {
    stop.abort();
    await running;
  });
  return { client, sync, builds, desired, stop, running, writer } as Harness & { writer: ReportWriter };
}

t.test('a burst of changes to one namespace is built and written once', async (t) => {
  // A window far longer than the burst takes, even on a loaded machine.
  const h = harness(t, new MemoryReports(), 2000);
  h.sync.release();
  h.desired.set('team-a', [report('team-a', 'kas', [1, 2])]);
  for (let i = 0; i < 100; i++) {
    h.sync.markDirty('team-a');
    // Each change in a turn of the loop of its own, as watch events come.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await within(5000, 'the namespace written', h.sync.whenClean(AbortSignal.timeout(5000)));
  t.same(h.builds, ['team-a'], 'built once');
  t.same(h.client.calls, ['create team-a']);
});

t.test('reports that come out as stored are not written again; gone ones are deleted', async (t) => {
  const h = harness(t);
  h.sync.release();
  h.desired.set('team-a', [report('team-a', 'kas-0', [1]), report('team-a', 'kas-1', [2])]);
  h.sync.markDirty('team-a');
  await within(5000, 'first write', h.sync.whenClean(AbortSignal.timeout(5000)));
  t.equal(h.client.calls.length, 2);
  h.sync.markDirty('team-a');
  await within(5000, 'second pass', h.sync.whenClean(AbortSignal.timeout(5000)));
  t.equal(h.builds.length, 2, 'built again');
  t.equal(h.client.calls.length, 2, 'nothing written: nothing changed');
  h.desired.set('team-a', [report('team-a', 'kas-0', [1, 3])]);
  h.sync.markDirty('team-a');
  await within(5000, 'third pass', h.sync.whenClean(AbortSignal.timeout(5000)));
  t.same(h.client.calls.slice(2), ['replace team-a/kas-0', 'delete team-a/kas-1']);
});

t.test('a new leader reading what is stored writes nothing when its results are the same, whatever the key order kept', async (t) => {
  const client = new MemoryReports();
  const stored = JSON.parse(report('team-a', 'kas', [{ policy: 'p', result: 'pass' }]).json) as Record<string, unknown>;
  // The API server re-encodes objects with sorted keys.
  const sorted = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(sorted) : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? 1 : -1)).map(([k, v]) => [k, sorted(v)])) : value;
  client.put('team-a/kas', { ...(sorted(stored) as Record<string, unknown>), metadata: { ...(stored['metadata'] as object), uid: 'u', resourceVersion: '7', creationTimestamp: '2025-01-01T00:00:00Z' } });
  const h = harness(t, client) as Harness & { writer: ReportWriter };
  await h.writer.readExisting('x', AbortSignal.timeout(5000));
  h.desired.set('team-a', [report('team-a', 'kas', [{ policy: 'p', result: 'pass' }])]);
  h.sync.markDirty('team-a');
  h.sync.release();
  await within(5000, 'the pass', h.sync.whenClean(AbortSignal.timeout(5000)));
  t.same(h.builds, ['team-a']);
  t.same(client.calls, [], 'no write');
});

t.test('nothing is written while held; the release writes what gathered', async (t) => {
  const h = harness(t, new MemoryReports(), 10);
  h.desired.set('team-a', [report('team-a', 'kas', [1])]);
  h.desired.set('team-b', [report('team-b', 'kas', [1])]);
  h.sync.markDirty('team-a');
  h.sync.markDirty('team-b');
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(h.client.calls, [], 'held');
  h.sync.release();
  await within(5000, 'written', h.sync.whenClean(AbortSignal.timeout(5000)));
  t.same(h.client.calls.sort(), ['create team-a', 'create team-b']);
});

t.test('a report someone changed meanwhile (409) is read again and replaced', async (t) => {
  const h = harness(t);
  h.sync.release();
  h.desired.set('team-a', [report('team-a', 'kas', [1])]);
  h.sync.markDirty('team-a');
  await within(5000, 'written', h.sync.whenClean(AbortSignal.timeout(5000)));
  h.client.put('team-a/kas', { edited: 'by hand' });
  h.desired.set('team-a', [report('team-a', 'kas', [1, 2])]);
  h.sync.markDirty('team-a');
  await within(5000, 'written again', h.sync.whenClean(AbortSignal.timeout(5000)));
  t.same(h.client.calls, ['create team-a', 'replace team-a/kas', 'replace team-a/kas'], 'the conflict, then the replace against what is stored');
  t.match(h.client.stored.get('team-a/kas'), { results: [1, 2] });
});

t.test('a failed write is tried again; a report deleted by someone is created again', async (t) => {
  const h = harness(t);
  h.sync.release();
  h.client.failNext = 1;
  h.desired.set('team-a', [report('team-a', 'kas', [1])]);
  h.sync.markDirty('team-a');
  await within(5000, 'written after the failure', h.sync.whenClean(AbortSignal.timeout(5000)));
  t.same(h.client.calls, ['create team-a']);
  t.equal(h.builds.length, 2, 'built again for the retry');
  h.client.stored.clear();
  h.desired.set('team-a', [report('team-a', 'kas', [1, 2])]);
  h.sync.markDirty('team-a');
  await within(5000, 'written again', h.sync.whenClean(AbortSignal.timeout(5000)));
  t.same(h.client.calls.slice(1), ['replace team-a/kas', 'create team-a']);
});

t.test('the token bucket lets a burst through, then makes each write wait for its token', async (t) => {
  let now = 0;
  const waited: number[] = [];
  const rate = new WriteRate(5, 2, () => now, async (ms) => {
    waited.push(ms);
    now += ms;
  });
  const signal = AbortSignal.timeout(10_000);
  await rate.take(signal);
  await rate.take(signal);
  t.same(waited, [], 'the burst of two at once');
  await rate.take(signal);
  await rate.take(signal);
  t.same(waited, [200, 200], 'then one every 200 ms (5 a second)');
  now += 10_000;
  await rate.take(signal);
  await rate.take(signal);
  await rate.take(signal);
  t.same(waited, [200, 200, 200], 'idle time refills the bucket up to the burst only');
});

t.test("the audit's pace: work in slices, a rest in proportion after each, idle time never counted", async (t) => {
  let now = 0;
  const rests: number[] = [];
  const pace = new Pace({ sliceMs: 10, share: 0.25 }, () => now, async (ms) => {
    rests.push(ms);
    now += ms;
  });
  const signal = AbortSignal.timeout(10_000);
  const unit = (ms: number) => () => void (now += ms);
  for (let i = 0; i < 3; i++) await pace.run(unit(4), signal);
  t.same(rests, [], 'a slice of 12 ms runs through');
  await pace.run(unit(4), signal);
  t.same(rests, [36], 'then a rest three times as long (a quarter of the time at most)');
  now += 60_000;
  await pace.run(unit(4), signal);
  await pace.run(unit(4), signal);
  t.same(rests, [36], 'a minute idle is no work: the next units run at once');
});
