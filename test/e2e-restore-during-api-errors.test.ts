/**
 * A configuration deleted while the API answers its writes with a burst of 429s or 5xx: the
 * leader keeps trying with a capped backoff that waits at least what Retry-After asks, and the
 * configuration is back long before the next resync (set to 10 minutes here).
 */
import t from 'tap';
import { ClusterHarness, NAME } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';

/** setTimeout may fire a millisecond early; the request log's clock is this process's. */
const TIMER_SLACK_MS = 5;

t.test('a deleted configuration is restored through a burst of 429s and 503s, honouring Retry-After, without waiting for a resync', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', [], { RESYNC_PERIOD: '10m' });
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    await cluster.api.waitForRequest((r) => r.verb === 'watch' && r.resource === resource, { phase: 'started', timeoutMs: EVENT_MS });
  }
  const creates = (resource: string, after: number) => cluster.api.requests.filter((r) => r.verb === 'create' && r.resource === resource && r.startedAt > after);

  // More refusals than one pass makes attempts (4): only a retried pass can get through.
  const REFUSALS = 6;
  cluster.api.faults.add({ resource: 'validatingwebhookconfigurations', verb: 'create' }, { status: 429, retryAfterSeconds: 1 }, { times: REFUSALS });
  const deletedAt = performance.now();
  cluster.api.store.delete('validatingwebhookconfigurations', undefined, NAME);
  await cluster.api.waitForRequest((r) => r.verb === 'create' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > deletedAt && r.status === 201, { timeoutMs: 60_000 });
  const throttled = creates('validatingwebhookconfigurations', deletedAt);
  t.same(throttled.map((r) => r.status), [...Array<number>(REFUSALS).fill(429), 201], 'refused six times, then created');
  const gaps = throttled.slice(1).map((r, i) => Math.round(r.startedAt - throttled[i]!.startedAt));
  t.ok(gaps.every((gap) => gap >= 1000 - TIMER_SLACK_MS), `every retry waited the 1 s Retry-After asked for (gaps ${gaps.join(', ')} ms)`);
  t.ok(replica.child.logs.some((l) => l.msg === 'reconcile failed; retrying'), 'a failed pass was retried by itself');

  // 503 without Retry-After: the backoff alone spaces the attempts, and the pass is retried too.
  cluster.api.faults.add({ resource: 'mutatingwebhookconfigurations', verb: 'create' }, { status: 503 }, { times: REFUSALS });
  const deletedAgainAt = performance.now();
  cluster.api.store.delete('mutatingwebhookconfigurations', undefined, NAME);
  await cluster.api.waitForRequest((r) => r.verb === 'create' && r.resource === 'mutatingwebhookconfigurations' && r.startedAt > deletedAgainAt && r.status === 201, { timeoutMs: 60_000 });
  t.same(creates('mutatingwebhookconfigurations', deletedAgainAt).map((r) => r.status), [...Array<number>(REFUSALS).fill(503), 201], 'refused six times, then created');
  await replica.child.waitForLog((l) => l.msg === 'webhook configuration restored: it was deleted' && l['kind'] === 'mutating', EVENT_MS);
  t.equal((await replica.child.stop()).code, 0);
});
