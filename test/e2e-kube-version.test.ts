// matchConditions need kube-apiserver 1.28 or later; an older one drops them and the webhook
// silently matches more. The compiled server reads /version from the API double at start and
// refuses to register a policy that uses them there, naming the webhook; without them, or on 1.28,
// it registers.
import t, { type Test } from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterHarness } from './support/kube/cluster-harness.js';
import { EXIT_MS } from './support/deadline.js';

const POLICY = (withConditions: boolean): string =>
  [
    'apiVersion: kube-admission-server/v1',
    'kind: Policy',
    'webhooks:',
    '  - name: deny-privileged',
    '    kind: denyPrivileged',
    '  - name: require-team',
    '    kind: requireLabels',
    '    params: { labels: [{ key: team }] }',
    ...(withConditions ? ['    matchConditions:', "      - { name: not-admin, expression: \"request.userInfo.username != 'system:admin'\" }"] : []),
    '',
  ].join('\n');

async function policyFile(t: Test, withConditions: boolean): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-version-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'policy.yaml');
  await writeFile(file, POLICY(withConditions));
  return file;
}

t.test('kube-apiserver 1.27 (as EKS reports it): a policy with matchConditions is refused at start, naming the webhook', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.27.16-eks-2f008fe' });
  cluster.seedDeployment(['kas-a']);
  const replica = cluster.spawnReplica(t, 'kas-a', ['--policy-file', await policyFile(t, true)]);
  const exit = await replica.child.exit(EXIT_MS * 6);
  t.equal(exit.code, 1, 'a startup failure');
  const failed = replica.child.logs.find((l) => l.msg === 'startup failed; shutting down');
  t.match(failed, { level: 'error', error: /kube-apiserver v1\.27\.16-eks-2f008fe drops matchConditions \(they need Kubernetes 1\.28 or later\), so webhook validating require-team would match more/ });
  t.notMatch(String(failed?.['error']), /deny-privileged/, 'only the webhook that uses them is named');
  t.match(replica.child.logs.find((l) => l.msg === 'API server version'), { version: 'v1.27.16-eks-2f008fe' });
  t.notOk(cluster.configuration('validating'), 'nothing registered');
  t.notOk(cluster.configuration('mutating'));
});

t.test('kube-apiserver 1.27 without matchConditions in the policy: registers as usual', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.27.16' });
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await policyFile(t, false)]);
  t.ok(cluster.configuration('validating'), 'registered');
  t.equal((await replica.child.stop()).code, 0);
});

t.test('kube-apiserver 1.28: matchConditions are registered', async (t) => {
  const cluster = await ClusterHarness.start(t, { version: 'v1.28.0' });
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await policyFile(t, true)]);
  const webhooks = cluster.configuration<{ webhooks: { name: string; matchConditions?: { name: string }[] }[] }>('validating')!.webhooks;
  t.same(webhooks.find((w) => w.name.startsWith('require-team.'))?.matchConditions?.map((c) => c.name), ['not-admin']);
  t.equal((await replica.child.stop()).code, 0);
});
