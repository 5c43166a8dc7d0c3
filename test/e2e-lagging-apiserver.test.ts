// The compiled server against a control plane of three kube-apiservers, one of them lagging
// (local-cluster/CONTRACT.md 6): when the server's teardown has deleted its configurations, the kube-apiservers
// that are up to date stop calling it at once, and the lagging one really goes on calling it for
// its lag. What each call met (an answer, or a refused connection once the server exited) is
// the server's business; this test shows the double does what production does.
import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { sleep } from '../local-cluster/util/waits.js';
import type { KubeApiServer } from '../local-cluster/fake-apiserver/index.js';

const LAG_MS = 5000;

const knows = (apiserver: KubeApiServer): boolean =>
  apiserver.configurations('validatingwebhookconfigurations').some((c) => c.metadata?.name === NAME);

async function until(condition: () => boolean, what: string, timeoutMs = EVENT_MS): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(25);
  }
}

t.test('a configuration deleted by the teardown is still called by the lagging kube-apiserver for its lag', async (t) => {
  const cluster = await ClusterHarness.start(t, { apiservers: [{}, {}, { lagMs: LAG_MS }] });
  const [upToDate, , lagging] = cluster.api.apiservers;
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a');
  await until(() => knows(lagging!), 'the lagging kube-apiserver learns of the registration', LAG_MS + EVENT_MS);
  const caller = cluster.caller(t, () => replica.port);
  const admit = (apiserver: number) => caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE, apiserver });
  const callsTo = (apiserver: string, after: number) => caller.calls.filter((c) => c.apiserver === apiserver && c.configuration === NAME && c.startedAt >= after);
  await admit(2);
  t.ok(callsTo('kube-apiserver-2', 0).length > 0, 'before the teardown every kube-apiserver calls the server');

  cluster.api.store.delete('deployments', NAMESPACE, NAME); // uninstalled: SIGTERM tears the registration down
  const stopping = replica.child.stop('SIGTERM');
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, (object) => object === undefined, { timeoutMs: EVENT_MS });
  const deletedAt = performance.now();

  const results: string[] = [];
  while (knows(lagging!)) {
    const result = await admit(2);
    results.push(result.allowed ? 'allowed' : (result.status.message ?? 'rejected'));
    await sleep(100);
  }
  const caughtUpMs = performance.now() - deletedAt;
  const lateCalls = callsTo('kube-apiserver-2', deletedAt);
  t.ok(lateCalls.length > 0, `the lagging kube-apiserver called the deleted configuration ${lateCalls.length} times after the DELETE`);
  t.ok(caughtUpMs >= LAG_MS - 100, `and forgot it only after its lag (${Math.round(caughtUpMs)} ms after the DELETE)`);
  t.comment(`what those calls met: ${[...new Set(lateCalls.map((c) => c.outcome === 'error' ? (c.error ?? '').replace(/^.*: /, '') : c.outcome))].join('; ')}`);
  t.comment(`the user's writes through it: ${[...new Set(results)].join('; ')}`);

  await admit(0);
  t.same(callsTo(upToDate!.name, deletedAt), [], 'the up-to-date kube-apiserver made no call after the DELETE');
  const afterLag = performance.now();
  await admit(2);
  t.same(callsTo('kube-apiserver-2', afterLag), [], 'once its lag passed, the lagging one stops too');
  await stopping;
});
