// namespaceObject on the live server: the compiled server, under the shipped RBAC plus the
// namespace-object component, keeps a cache of the Namespaces (one list, one watch, no call per
// review), registers only once it synced, and follows namespaces created and relabelled later.
// Without the grant it does not become Ready and says what is missing.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { KubeObject } from '../local-cluster/util/kube-object.js';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness, NAMESPACE, POD_KIND, POD_RESOURCE } from './support/kube/cluster-harness.js';
import { shippedRbac } from './support/manifests/shipped-rbac.js';
import { tempDir } from './support/tools/tool-runner.js';

const POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: prod-registry
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "!has(namespaceObject.apiVersion) && !has(namespaceObject.metadata.managedFields) && namespaceObject.metadata.labels['kubernetes.io/metadata.name'] == namespaceObject.metadata.name"
        message: namespaceObject is not shaped as kube-apiserver shapes it
      - expression: "namespaceObject.metadata.?labels.env.orValue('') != 'prod' || object.spec.containers.all(c, c.image.startsWith('registry.example/'))"
        messageExpression: "'pods in ' + namespaceObject.metadata.name + ' (env prod) pull from registry.example only'"
`;

const pod = (namespace: string, image = 'nginx'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace },
  spec: { containers: [{ name: 'web', image }] },
});

async function policyFile(t: Test): Promise<string> {
  const file = join(await tempDir(t, 'kas-e2e-ns-'), 'policy.yaml');
  await writeFile(file, POLICY);
  return file;
}

t.test('the server reads namespaceObject from its Namespace cache, synced before it registers', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.setRbac(await shippedRbac(NAMESPACE, ['namespace-object']));
  const teamA = cluster.api.store.get('namespaces', undefined, 'team-a')!;
  cluster.api.store.put('namespaces', { ...teamA, metadata: { ...teamA.metadata, labels: { ...teamA.metadata?.labels, env: 'prod' } } } as KubeObject);
  cluster.api.store.put('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'plain' } } as KubeObject);

  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', await policyFile(t)]);
  const requests = cluster.api.requests;
  const firstOf = (verb: string, resource: string) => requests.find((r) => r.verb === verb && r.resource === resource);
  const listed = firstOf('list', 'namespaces');
  const registered = firstOf('create', 'validatingwebhookconfigurations');
  t.ok(listed && registered && listed.startedAt < registered.startedAt, 'listed the namespaces before it registered');
  await cluster.api.waitForRequest((r) => r.verb === 'watch' && r.resource === 'namespaces', { phase: 'started', timeoutMs: EVENT_MS });

  const caller = cluster.caller(t, () => replica.port);
  const admit = (namespace: string, image?: string) => caller.admit({ operation: 'CREATE', object: pod(namespace, image), kind: POD_KIND, resource: POD_RESOURCE });
  t.match(await admit('team-a'), { allowed: false, status: { message: /pods in team-a \(env prod\) pull from registry.example only/ } });
  t.match(await admit('team-a', 'registry.example/web:1'), { allowed: true });
  t.match(await admit('plain'), { allowed: true }, 'a namespace without env');

  // A namespace created after start reaches the cache through the watch, not through a call per review.
  cluster.api.store.put('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { env: 'prod' } } } as KubeObject);
  const deadline = performance.now() + EVENT_MS;
  let answer = await admit('shop');
  while (answer.allowed !== false || !/env prod/.test(answer.status.message ?? '')) {
    t.ok(performance.now() < deadline, 'the watch delivers the new namespace in time');
    if (performance.now() >= deadline) break;
    t.match(answer, { allowed: false, status: { code: 500 } }, 'until then: the failurePolicy answer, never a wrong verdict');
    await new Promise((resolve) => setTimeout(resolve, 100));
    answer = await admit('shop');
  }
  t.match(answer, { allowed: false, status: { message: /pods in shop \(env prod\)/ } });

  const reviewCalls = requests.filter((r) => r.resource === 'namespaces' && r.verb === 'get');
  t.same(reviewCalls, [], 'no GET of a namespace: reviews read the cache');
  t.equal(requests.filter((r) => r.resource === 'namespaces' && r.verb === 'list').length, 1, 'one list');
  t.equal(requests.filter((r) => r.resource === 'namespaces' && r.verb === 'watch').length, 1, 'one watch per replica');
  t.same(requests.filter((r) => r.status === 403), [], 'all within the shipped rules plus the component');
  t.equal((await replica.child.stop()).code, 0);
});

t.test('without list and watch on namespaces the server never becomes Ready and says what to grant', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.setRbac(await shippedRbac(NAMESPACE));
  const replica = cluster.spawnReplica(t, 'kas-a', ['--policy-file', await policyFile(t)]);
  const exit = await replica.child.exit();
  t.equal(exit.code, 1);
  t.match(replica.child.logs.find((l) => l.msg === 'startup failed; shutting down'), {
    error: /namespace cache did not sync within 30 s \(.*403.*\); webhooks prod-registry read namespaceObject, so the ServiceAccount needs list and watch on namespaces .*manifests\/components\/namespace-object/,
  });
  t.notOk(replica.child.logs.some((l) => l.msg === 'ready'), 'never ready');
  t.notOk(cluster.configuration('validating'), 'nothing registered');
});

t.test('a policy that does not read namespaceObject never touches namespaces', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.setRbac(await shippedRbac(NAMESPACE));
  const replica = await cluster.startReplica(t, 'kas-a');
  t.same(cluster.api.requests.filter((r) => r.resource === 'namespaces'), []);
  t.equal((await replica.child.stop()).code, 0);
});
