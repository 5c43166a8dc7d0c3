// The Eviction API and the disruption controller (what `kubectl drain` meets): a PodDisruptionBudget's
// status from the Pods it selects and their Deployment's scale, and each eviction decided by it, with
// kube-apiserver's answers (eviction.go).
import t, { type Test } from 'tap';
import { ADMIN_USER, startFakeApiServer, type KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { ClusterClient } from '../local-cluster/cluster/api-client.js';
import { DisruptionController } from '../local-cluster/cluster/disruption-controller.js';

const NS = 'apps';
const LABELS = { app: 'web' };

async function world(t: Test) {
  const api = await startFakeApiServer({ namespaces: [NS] });
  t.teardown(() => api.close());
  const client = new ClusterClient(api, ADMIN_USER);
  const deployment = api.store.put('deployments', { metadata: { name: 'web', namespace: NS }, spec: { replicas: 2, selector: { matchLabels: LABELS }, template: { metadata: { labels: LABELS }, spec: { containers: [{ name: 'c', image: 'x' }] } } } } as KubeObject);
  const replicaSet = api.store.put('replicasets', {
    metadata: { name: 'web-1', namespace: NS, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: deployment.metadata!.uid!, controller: true }] },
    spec: { replicas: 2, selector: { matchLabels: LABELS } },
  } as KubeObject);
  const pod = (name: string, ready: boolean): KubeObject =>
    api.store.put('pods', {
      metadata: { name, namespace: NS, labels: LABELS, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: replicaSet.metadata!.uid!, controller: true }] },
      spec: { containers: [{ name: 'c', image: 'x' }] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
    } as KubeObject);
  const pdb = (name: string, spec: Record<string, unknown>): KubeObject => api.store.put('poddisruptionbudgets', { metadata: { name, namespace: NS }, spec: { selector: { matchLabels: LABELS }, ...spec } } as KubeObject);
  const controller = new DisruptionController(client);
  const status = (name: string) => api.store.get('poddisruptionbudgets', NS, name)?.['status'] as Record<string, unknown>;
  const evict = (name: string) => rawRequest(api, 'POST', `/api/v1/namespaces/${NS}/pods/${name}/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } } });
  return { api, pod, pdb, controller, status, evict };
}

t.test('maxUnavailable 1 over a Deployment of 2: one eviction at a time, a 429 with the budget named until a replacement is ready', async (t) => {
  const w = await world(t);
  w.pod('a', true);
  w.pod('b', true);
  w.pdb('web', { maxUnavailable: 1 });
  await w.controller.sync(NS, 'web');
  t.has(w.status('web'), { expectedPods: 2, currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1, observedGeneration: 1 }, 'the status from the Pods and the Deployment scale');

  const first = await w.evict('a');
  t.equal(first.status, 201, 'the first eviction is allowed');
  t.same((first.json as { status: string }).status, 'Success');
  t.notOk(w.api.store.get('pods', NS, 'a'), 'the Pod is deleted');
  t.has(w.status('web'), { disruptionsAllowed: 0 }, 'the disruption is spent at once');
  t.ok((w.status('web')['disruptedPods'] as Record<string, string>)['a'], 'and the Pod recorded as disrupted');

  await w.controller.sync(NS, 'web'); // the controller sees the deletion
  t.has(w.status('web'), { currentHealthy: 1, disruptionsAllowed: 0 });
  const second = await w.evict('b');
  t.equal(second.status, 429, 'the second is refused');
  t.has(second.json, {
    reason: 'TooManyRequests',
    message: "Cannot evict pod as it would violate the pod's disruption budget.",
    details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 1 healthy pods and has 1 currently' }], retryAfterSeconds: 10 },
  });
  t.ok(w.api.store.get('pods', NS, 'b'), 'and the Pod stays');

  w.pod('c', false);
  await w.controller.sync(NS, 'web');
  t.has(w.status('web'), { currentHealthy: 1, disruptionsAllowed: 0 }, 'an unready replacement does not count');
  w.pod('c', true);
  await w.controller.sync(NS, 'web');
  t.has(w.status('web'), { currentHealthy: 2, disruptionsAllowed: 1 }, 'a ready one does');
  t.equal((await w.evict('b')).status, 201, 'then the next eviction is allowed');
});

t.test('unhealthy Pods: AlwaysAllow evicts them without spending the budget; IfHealthyBudget only while the budget is met', async (t) => {
  const w = await world(t);
  w.pod('a', true);
  w.pod('sick', false);
  w.pdb('web', { maxUnavailable: 0, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
  await w.controller.sync(NS, 'web');
  t.has(w.status('web'), { disruptionsAllowed: 0 });
  t.equal((await w.evict('sick')).status, 201, 'an unready Pod goes under AlwaysAllow');
  t.equal((await w.evict('a')).status, 429, 'a ready one does not');

  const v = await world(t);
  v.pod('a', true);
  v.pod('sick', false);
  v.pdb('web', { minAvailable: 2 });
  await v.controller.sync(NS, 'web');
  t.equal((await v.evict('sick')).status, 429, 'IfHealthyBudget: not while the budget is not met');
});

t.test('a budget not yet observed is a 429; two budgets for one Pod are a 500; no budget, the Pod just goes', async (t) => {
  const w = await world(t);
  w.pod('a', true);
  w.pod('b', true);
  w.pdb('web', { maxUnavailable: 1 });
  const unobserved = await w.evict('a');
  t.equal(unobserved.status, 429);
  t.match((unobserved.json as { details: { causes: { message: string }[] } }).details.causes[0]?.message, 'The disruption budget web is still being processed by the server.');
  w.pdb('web-too', { maxUnavailable: 1 });
  await w.controller.sync(NS, 'web');
  await w.controller.sync(NS, 'web-too');
  const two = await w.evict('a');
  t.equal(two.status, 500);
  t.match((two.json as { message: string }).message, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');

  const v = await world(t);
  v.pod('a', true);
  t.equal((await v.evict('a')).status, 201, 'without a budget');
  t.notOk(v.api.store.get('pods', NS, 'a'));
  t.equal((await v.evict('a')).status, 404, 'a missing Pod is a 404');
});
