/**
 * A rule renamed while one kube-apiserver's cache of the configurations lags: after the leader's
 * PUT has landed, that kube-apiserver still calls the old path for a while, and the old rule must
 * still be enforced there: the previous handler stays served for the entry overlap (3 s here, 15
 * minutes by default) after the live configurations stopped routing to it, not only until the PUT
 * lands. test/e2e-lagging-apiserver-old-names.test.ts has a lag past 3 s and the default overlap.
 */
import { join } from 'node:path';
import t from 'tap';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { ClusterHarness, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { DENY_PRIVILEGED_ENTRY, policyText, requireLabelEntry, unservedWarning } from './support/policy/policy-text.js';

/** The slowest kube-apiserver's cache: behind the store by this much (below the 3 s overlap these replicas get). */
const LAG_MS = 1500;

t.test('after a rename, the kube-apiserver whose cache lags still gets the old rule enforced on the old path', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const volume = new AtomicWriter(join(cluster.dir, 'policy-volume'));
  await volume.write({ 'policy.yaml': policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team', 'team')) });
  const leader = await cluster.startReplica(t, 'kas-a', ['--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms', ENTRY_OVERLAP: '3s' });
  const slowest = cluster.laggingCaller(t, () => leader.port, LAG_MS);
  const admitUnlabelled = () => slowest.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal((await admitUnlabelled()).allowed, false, 'require-team enforced before the change');

  const editedAt = performance.now();
  await volume.write({ 'policy.yaml': policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-owner', 'owner')) });
  const put = await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > editedAt && r.status === 200, { timeoutMs: EVENT_MS });

  // Until its cache catches up, the slowest kube-apiserver calls /validate/require-team.
  const answers: { message: string; warnings: string[] }[] = [];
  while (performance.now() < put.endedAt! + LAG_MS + 500) {
    const result = await admitUnlabelled();
    answers.push({ message: result.allowed ? 'allowed' : (result.status.message ?? ''), warnings: result.warnings });
  }
  const onOldPath = answers.filter((a) => /require-team/.test(a.message));
  t.ok(onOldPath.length > 0, `the slowest kube-apiserver called the old path after the PUT (${onOldPath.length} of ${answers.length} calls)`);
  t.same(answers.filter((a) => a.message === 'allowed'), [], 'every call denied: no enforcing rule failed open');
  t.same(answers.filter((a) => a.warnings.includes(unservedWarning('require-team'))), [], 'none answered "not served"');
  t.match(answers.at(-1)?.message, /require-owner.*missing label "owner"/, 'then it calls the new path');

  const retired = await leader.child.waitForMessage('previous handlers retired', EVENT_MS);
  t.same(retired['retired'], ['/validate/require-team']);
  t.equal((await leader.child.stop()).code, 0);
});
