/** What the teardown e2e tests check on the API side and in the server's log. */
import type { Test } from 'tap';
import type { ClusterHarness, Replica } from './cluster-harness.js';

export const configurationDeletes = (cluster: ClusterHarness) =>
  cluster.api.requests.filter((r) => r.verb === 'delete' && r.resource?.endsWith('webhookconfigurations'));

export const refusedRequests = (cluster: ClusterHarness) =>
  cluster.api.requests.filter((r) => r.status === 403).map((r) => `${r.verb} ${r.resource}/${r.name ?? ''}`);

/** The teardown decision's log line (logged at the teardown step, which starts at SIGTERM). */
export const teardownDecision = (replica: Replica) =>
  replica.child.waitForLog((l) => l.msg === 'keeping the webhook configurations' || l.msg === 'deleting the webhook configurations', 5000);

/** SIGTERM; then a clean exit that kept both configurations, for the reason `why`. */
export async function keptAfterSigterm(t: Test, cluster: ClusterHarness, replica: Replica, why: RegExp): Promise<void> {
  const exit = await replica.child.stop('SIGTERM');
  t.equal(exit.code, 0, 'clean exit');
  t.match(await teardownDecision(replica), { msg: 'keeping the webhook configurations', teardown: false, why });
  t.same(configurationDeletes(cluster), [], 'no DELETE');
  t.ok(cluster.configuration('validating') && cluster.configuration('mutating'), 'both configurations still registered');
}
