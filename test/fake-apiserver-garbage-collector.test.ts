// The double's garbage collector: dependents whose owners are all gone (or replaced) are deleted.
import t from 'tap';
import { ObjectStore, type KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { startGarbageCollector } from '../local-cluster/fake-apiserver/garbage-collector.js';

const roleRef = (role: KubeObject) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: role.metadata!.name!, uid: role.metadata!.uid! });
const webhookConfiguration = (name: string, ownerReferences: unknown[]) => ({ metadata: { name, ownerReferences }, webhooks: [] }) as KubeObject;

/** Resolves once the collector has had a chance to sweep after the last change. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 150));

t.test('an owner deleted, or deleted and re-created under a new uid: its dependents are collected', async (t) => {
  const store = new ObjectStore();
  const gc = startGarbageCollector(store);
  t.teardown(() => gc.stop());
  const role = store.put('clusterroles', { metadata: { name: 'owner' }, rules: [] });
  store.put('validatingwebhookconfigurations', webhookConfiguration('kept', [roleRef(role)]));
  store.put('mutatingwebhookconfigurations', webhookConfiguration('unowned', []));
  await settled();
  t.ok(store.get('validatingwebhookconfigurations', undefined, 'kept'), 'an existing owner keeps its dependent');

  store.delete('clusterroles', undefined, 'owner');
  const replaced = store.put('clusterroles', { metadata: { name: 'owner' }, rules: [] });
  t.not(replaced.metadata?.uid, role.metadata?.uid);
  await settled();
  t.notOk(store.get('validatingwebhookconfigurations', undefined, 'kept'), 'the re-created ClusterRole is another owner: the dependent is collected');
  t.ok(store.get('mutatingwebhookconfigurations', undefined, 'unowned'), 'objects without owners are left alone');

  store.put('validatingwebhookconfigurations', webhookConfiguration('dangling', [roleRef(role)]));
  await settled();
  t.notOk(store.get('validatingwebhookconfigurations', undefined, 'dangling'), 'created naming a deleted owner: collected as well');
  t.same(gc.collected, ['validatingwebhookconfigurations /kept', 'validatingwebhookconfigurations /dangling']);
});

t.test('a chain is collected level by level; owners of kinds the double does not know count as present', async (t) => {
  const store = new ObjectStore();
  store.createNamespace('kas');
  const gc = startGarbageCollector(store);
  t.teardown(() => gc.stop());
  const deployment = store.put('deployments', { metadata: { name: 'web', namespace: 'kas' }, spec: { replicas: 1 } });
  const ref = (o: KubeObject) => ({ apiVersion: o.apiVersion!, kind: o.kind!, name: o.metadata!.name!, uid: o.metadata!.uid!, controller: true });
  const replicaSet = store.put('replicasets', { metadata: { name: 'web-1', namespace: 'kas', ownerReferences: [ref(deployment)] } });
  store.put('pods', { metadata: { name: 'web-1-a', namespace: 'kas', ownerReferences: [ref(replicaSet)] } });
  store.put('pods', { metadata: { name: 'rollout-0', namespace: 'kas', ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'rollout', uid: 'x', controller: true }] } });
  store.delete('deployments', 'kas', 'web');
  await settled();
  await settled();
  t.notOk(store.get('replicasets', 'kas', 'web-1'));
  t.notOk(store.get('pods', 'kas', 'web-1-a'));
  t.ok(store.get('pods', 'kas', 'rollout-0'), 'an Argo Rollout is not served by the double: its pod stays');
});
