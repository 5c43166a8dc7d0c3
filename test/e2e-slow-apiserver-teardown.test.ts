/**
 * Teardown with a kube-apiserver whose cache of the configurations lags: after the DELETEs have
 * landed, it still calls for a moment, over new connections. The server keeps serving for the
 * propagation grace (3 s) inside the shutdown deadline before it closes the listener.
 */
import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { EVENT_MS, EXIT_MARGIN_MS } from './support/deadline.js';

/** The slowest kube-apiserver's cache: behind the store by this much (below the server's 3 s grace). */
const LAG_MS = 1500;
/**
 * The deadline wins over the grace (src/lifecycle/shutdown.ts): with the default 5 s, DELETEs slowed
 * to 2.5 s by a loaded machine leave less grace than the lag. This test is about the grace, so the
 * deadline is long enough for any teardown; the 5 s deadline has its own tests (e2e-teardown*).
 */
const SHUTDOWN_TIMEOUT_MS = 10_000;

t.test('after the teardown, the kube-apiserver whose cache lags still gets answers until it has seen the deletions', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', [], { SHUTDOWN_TIMEOUT: `${SHUTDOWN_TIMEOUT_MS}ms` });
  // Unused until the deletions: its first call opens a new connection, as a kube-apiserver that
  // had not called this pod before would.
  const slowest = cluster.laggingCaller(t, () => replica.port, LAG_MS);
  cluster.api.store.scaleDeployment(NAMESPACE, NAME, 0);

  const signalledAt = performance.now();
  const stopping = replica.child.stop('SIGTERM');
  const deletes = await Promise.all(
    ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'].map((resource) =>
      cluster.api.waitForRequest((r) => r.verb === 'delete' && r.resource === resource && r.status === 200, { timeoutMs: EVENT_MS }),
    ),
  );
  const deletedAt = Math.max(...deletes.map((d) => d.endedAt!));
  const results = [];
  while (performance.now() < deletedAt + LAG_MS - 100) {
    results.push(await slowest.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE }));
  }
  const calls = slowest.calls.filter((c) => c.startedAt > deletedAt);
  t.ok(calls.length > 0, `the slowest kube-apiserver called after the deletions (${calls.length} calls)`);
  t.same(calls.filter((c) => c.outcome === 'error').map((c) => c.error), [], 'every one answered: none refused or cut');
  t.same(results.filter((r) => !r.allowed), [], 'and every admission allowed');

  const exit = await stopping;
  const report = replica.child.logs.find((l) => l.msg === 'shutdown complete' || l.msg === 'shutdown finished with problems');
  t.equal(exit.code, 0, `a clean exit: ${JSON.stringify(report)}`);
  t.ok(exit.ms < SHUTDOWN_TIMEOUT_MS + EXIT_MARGIN_MS, `exited within the shutdown deadline (${Math.round(exit.ms)} ms after SIGTERM, ${Math.round(performance.now() - signalledAt)} ms now)`);
  t.match(report, { msg: 'shutdown complete', steps: { teardown: /^ok/, 'teardown-grace': /^ok/, 'server-close': /^ok/ } });
  t.notOk(cluster.configuration('validating'), 'torn down');
});
