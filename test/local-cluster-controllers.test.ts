// The local cluster's controllers without a kubelet: the test plays the kubelet by marking Pods
// ready. Rolling updates per strategy (never more than replicas + maxSurge, never fewer than
// replicas - maxUnavailable available), the owner chain, background garbage collection (the
// ClusterRole owning the webhook configurations), Foreground and Orphan deletes, namespace
// deletion, and RBAC evaluated from the stored bindings.
import t from 'tap';
import { ADMIN_USER, serviceAccountUser, startFakeApiServer, type KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { ClusterClient } from '../local-cluster/cluster/api-client.js';
import { ControllerManager } from '../local-cluster/cluster/controller-manager.js';
import { NAMESPACE_DELETION_GRACE_MS } from '../local-cluster/cluster/namespace-controller.js';

const api = await startFakeApiServer({ namespaces: ['apps'], finalizers: true });
const controllers = new ControllerManager(api, (message) => t.comment(message));
controllers.start();
t.teardown(async () => {
  controllers.stop();
  await api.close();
});
const admin = new ClusterClient(api, ADMIN_USER);
const WAIT_MS = 20_000;

function deployment(name: string, replicas: number, strategy: Record<string, unknown>, version = 'v1'): KubeObject {
  const labels = { app: name };
  return {
    metadata: { name, namespace: 'apps' },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      strategy,
      template: { metadata: { labels, annotations: { version } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
    },
  };
}

const podsOf = (app: string): KubeObject[] => api.store.list('pods', 'apps').filter((p) => p.metadata?.labels?.['app'] === app && !p.metadata.deletionTimestamp);
const readyPods = (app: string): KubeObject[] =>
  podsOf(app).filter((p) => ((p.status as { conditions?: { type: string; status: string }[] }).conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'));

/** What a kubelet reports for a Pod that started and passed its readiness probe. */
async function markReady(pod: KubeObject): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await admin.mergePatch({ resource: 'pods', namespace: 'apps', name: pod.metadata?.name ?? '' }, {
    status: { phase: 'Running', podIP: '127.0.0.9', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }], containerStatuses: [{ name: 'c', ready: true, restartCount: 0, state: { running: { startedAt: now } } }] },
  }, 'status');
}

/** Resolves once `check` holds, re-checked on every store change; rejects at the deadline naming `what`. */
function until(what: string, check: () => boolean, timeoutMs = WAIT_MS): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`${what}: not within ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = api.store.subscribe(() => {
      if (!check()) return;
      clearTimeout(timer);
      unsubscribe();
      resolve();
    });
  });
}

t.test('a Deployment gets a ReplicaSet and Pods with the owner chain and pod-template-hash', async (t) => {
  const created = await admin.create('deployments', 'apps', deployment('web', 2, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }));
  await until('two Pods', () => podsOf('web').length === 2);
  const [rs] = api.store.list('replicasets', 'apps').filter((r) => r.metadata?.labels?.['app'] === 'web');
  const hash = rs?.metadata?.labels?.['pod-template-hash'] ?? '';
  t.match(hash, /^[bcdfghjklmnpqrstvwxz2456789]+$/);
  t.equal(rs?.metadata?.name, `web-${hash}`);
  t.has(rs?.metadata?.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: created.metadata?.uid, controller: true, blockOwnerDeletion: true }]);
  t.equal(rs?.metadata?.annotations?.['deployment.kubernetes.io/revision'], '1');
  for (const pod of podsOf('web')) {
    t.match(pod.metadata?.name, new RegExp(`^web-${hash}-[bcdfghjklmnpqrstvwxz2456789]{5}$`), 'generateName <replicaset>- with utilrand suffix');
    t.has(pod.metadata?.ownerReferences, [{ kind: 'ReplicaSet', name: rs?.metadata?.name, uid: rs?.metadata?.uid, controller: true }]);
    t.equal(pod.metadata?.labels?.['pod-template-hash'], hash);
  }
  const sameHash = await admin.create('deployments', 'apps', { ...deployment('web', 2, {}), metadata: { name: 'web-copy', namespace: 'apps' } });
  await until('the copy has its ReplicaSet', () => api.store.list('replicasets', 'apps').some((r) => r.metadata?.ownerReferences?.[0]?.uid === sameHash.metadata?.uid));
  const copyRs = api.store.list('replicasets', 'apps').find((r) => r.metadata?.ownerReferences?.[0]?.uid === sameHash.metadata?.uid);
  t.equal(copyRs?.metadata?.labels?.['pod-template-hash'], hash, 'the same template hashes the same');
  await admin.delete({ resource: 'deployments', namespace: 'apps', name: 'web-copy' });
});

t.test('rolling update, maxSurge 1 and maxUnavailable 0: one new Pod at a time, two always available', async (t) => {
  for (const pod of podsOf('web')) await markReady(pod);
  await until('the Deployment is available', () => (api.store.get('deployments', 'apps', 'web')?.status as { availableReplicas?: number }).availableReplicas === 2);
  const violations: string[] = [];
  const unsubscribe = api.store.subscribe(() => {
    const total = podsOf('web').length;
    if (total > 3) violations.push(`${total} Pods (maxSurge 1)`);
  });
  const current = api.store.get('deployments', 'apps', 'web')!;
  await admin.update({ resource: 'deployments', namespace: 'apps', name: 'web' }, deployment('web', 2, (current.spec as { strategy: Record<string, unknown> }).strategy, 'v2'));
  const oldPods = new Set(podsOf('web').map((p) => p.metadata?.uid));
  for (let round = 0; round < 2; round++) {
    await until(`round ${round}: a new Pod`, () => podsOf('web').some((p) => !oldPods.has(p.metadata?.uid) && !readyPods('web').includes(p)));
    t.equal(readyPods('web').length, 2, 'the old Pods serve while the new one starts');
    const fresh = podsOf('web').find((p) => !oldPods.has(p.metadata?.uid) && !readyPods('web').some((r) => r.metadata?.uid === p.metadata?.uid));
    await markReady(fresh!);
    oldPods.add(fresh?.metadata?.uid);
  }
  await until('rolled out', () => {
    const status = api.store.get('deployments', 'apps', 'web')?.status as { updatedReplicas?: number; availableReplicas?: number; replicas?: number };
    return status.updatedReplicas === 2 && status.availableReplicas === 2 && status.replicas === 2 && podsOf('web').length === 2;
  });
  unsubscribe();
  t.same(violations, []);
  const replicaSets = api.store.list('replicasets', 'apps').filter((r) => r.metadata?.labels?.['app'] === 'web');
  t.same(replicaSets.map((r) => (r.spec as { replicas: number }).replicas).sort(), [0, 2]);
  const progressing = ((api.store.get('deployments', 'apps', 'web')?.status as { conditions: { type: string; reason: string }[] }).conditions).find((c) => c.type === 'Progressing');
  t.equal(progressing?.reason, 'NewReplicaSetAvailable', 'what kubectl rollout status waits for');
});

t.test('Recreate: the old Pods go before the new ones come', async (t) => {
  await admin.create('deployments', 'apps', deployment('batch', 2, { type: 'Recreate' }));
  await until('two Pods', () => podsOf('batch').length === 2);
  for (const pod of podsOf('batch')) await markReady(pod);
  const old = new Set(podsOf('batch').map((p) => p.metadata?.uid));
  let overlap = false;
  const unsubscribe = api.store.subscribe(() => {
    const pods = podsOf('batch');
    if (pods.some((p) => old.has(p.metadata?.uid)) && pods.some((p) => !old.has(p.metadata?.uid))) overlap = true;
  });
  await admin.update({ resource: 'deployments', namespace: 'apps', name: 'batch' }, deployment('batch', 2, { type: 'Recreate' }, 'v2'));
  await until('two new Pods', () => podsOf('batch').length === 2 && podsOf('batch').every((p) => !old.has(p.metadata?.uid)));
  unsubscribe();
  t.notOk(overlap, 'never old and new Pods at once');
});

t.test('garbage collection: deleting a Deployment removes its ReplicaSets and Pods; a Foreground delete waits for them', async (t) => {
  await admin.delete({ resource: 'deployments', namespace: 'apps', name: 'batch' }, { propagationPolicy: 'Foreground' });
  const deleting = api.store.get('deployments', 'apps', 'batch');
  t.ok(deleting?.metadata?.deletionTimestamp, 'a Foreground delete keeps the owner, with deletionTimestamp');
  t.same(deleting?.metadata?.finalizers, ['foregroundDeletion']);
  await until('the Deployment and its dependents gone', () => !api.store.get('deployments', 'apps', 'batch') && podsOf('batch').length === 0);
  t.same(api.store.list('replicasets', 'apps').filter((r) => r.metadata?.labels?.['app'] === 'batch'), []);

  await admin.delete({ resource: 'deployments', namespace: 'apps', name: 'web' });
  t.notOk(api.store.get('deployments', 'apps', 'web'), 'Background: the owner goes at once');
  await until('ReplicaSets and Pods collected', () => podsOf('web').length === 0 && !api.store.list('replicasets', 'apps').some((r) => r.metadata?.labels?.['app'] === 'web'));
});

t.test('an Orphan delete leaves the dependents, without the owner reference', async (t) => {
  const owner = await admin.create('configmaps', 'apps', { metadata: { name: 'owner', namespace: 'apps' } });
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '' };
  await admin.create('secrets', 'apps', { metadata: { name: 'dependent', namespace: 'apps', ownerReferences: [ref] } });
  await admin.delete({ resource: 'configmaps', namespace: 'apps', name: 'owner' }, { propagationPolicy: 'Orphan' });
  await until('the owner gone', () => !api.store.get('configmaps', 'apps', 'owner'));
  t.same(api.store.get('secrets', 'apps', 'dependent')?.metadata?.ownerReferences ?? [], [], 'kept, reference removed');
});

t.test('the ClusterRole owns the webhook configurations: deleting it deletes them', async (t) => {
  const role = await admin.create('clusterroles', undefined, { metadata: { name: 'kube-admission-server' }, rules: [] });
  const ref = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'kube-admission-server', uid: role.metadata?.uid ?? '' };
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    await admin.create(resource, undefined, { metadata: { name: 'kube-admission-server', ownerReferences: [ref] }, webhooks: [] });
  }
  const stale = { ...ref, uid: '00000000-0000-0000-0000-000000000000' };
  await admin.create('validatingwebhookconfigurations', undefined, { metadata: { name: 'stale-owner', ownerReferences: [stale] }, webhooks: [] });
  await until('a configuration whose owner uid does not match is collected', () => !api.store.get('validatingwebhookconfigurations', undefined, 'stale-owner'));
  t.ok(api.store.get('validatingwebhookconfigurations', undefined, 'kube-admission-server'), 'the live owner keeps its dependents');
  await admin.delete({ resource: 'clusterroles', name: 'kube-admission-server' });
  await until('both configurations collected', () =>
    !api.store.get('mutatingwebhookconfigurations', undefined, 'kube-admission-server') && !api.store.get('validatingwebhookconfigurations', undefined, 'kube-admission-server'));
  t.pass('gone');
});

t.test('RBAC from the stored Roles and bindings, for service-account tokens', async (t) => {
  const token = api.issueToken(serviceAccountUser('apps', 'reader'));
  const caller = { url: api.url, caPem: api.caPem, token };
  const denied = await rawRequest(caller, 'GET', '/api/v1/namespaces/apps/secrets/dependent');
  t.equal(denied.status, 403);
  t.equal((denied.json as { message: string }).message, 'secrets "dependent" is forbidden: User "system:serviceaccount:apps:reader" cannot get resource "secrets" in API group "" in the namespace "apps"');
  await admin.create('roles', 'apps', { metadata: { name: 'read-secrets', namespace: 'apps' }, rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['dependent'], verbs: ['get'] }] });
  await admin.create('rolebindings', 'apps', {
    metadata: { name: 'reader', namespace: 'apps' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-secrets' },
    subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'apps' }],
  });
  t.equal((await rawRequest(caller, 'GET', '/api/v1/namespaces/apps/secrets/dependent')).status, 200, 'the binding allows the named Secret');
  t.equal((await rawRequest(caller, 'GET', '/api/v1/namespaces/apps/secrets')).status, 403, 'and nothing more');
  t.equal((await rawRequest(caller, 'GET', '/api/v1/namespaces/default/secrets/dependent')).status, 403, 'nor in another namespace');
});

t.test('deleting a namespace: Terminating, no new objects, contents deleted, then the namespace', async (t) => {
  await admin.create('namespaces', undefined, { metadata: { name: 'doomed' } });
  await admin.create('configmaps', 'doomed', { metadata: { name: 'a', namespace: 'doomed' } });
  await admin.delete({ resource: 'namespaces', name: 'doomed' });
  const terminating = api.store.get('namespaces', undefined, 'doomed');
  t.equal((terminating?.status as { phase: string }).phase, 'Terminating');
  const refused = await rawRequest(api, 'POST', '/api/v1/namespaces/doomed/configmaps', { body: { metadata: { name: 'b' } } });
  t.equal(refused.status, 403);
  t.equal((refused.json as { message: string }).message, 'configmaps "b" is forbidden: unable to create new content in namespace doomed because it is being terminated');
  const started = performance.now();
  await until('the namespace gone', () => !api.store.get('namespaces', undefined, 'doomed'), NAMESPACE_DELETION_GRACE_MS + WAIT_MS);
  t.ok(performance.now() - started >= NAMESPACE_DELETION_GRACE_MS - 100, 'after the namespace controller\'s 5 s grace');
  t.same(api.store.list('configmaps', 'doomed'), []);
});
