// A GitOps tool force-replaces the owner ClusterRole (delete, then create: a new uid). With the
// double's garbage collector on, the configurations are collected once; the leader restores them
// without an ownerReference while the ClusterRole is missing, then points it at the new uid. No
// fight: the configurations are not collected and re-created over and over.
import t from 'tap';
import { ClusterHarness, NAME } from './support/kube/cluster-harness.js';
import type { KubeObject, RequestRecord } from '../local-cluster/fake-apiserver/index.js';

const KINDS = ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'] as const;

const roleReferences = (object: KubeObject | undefined) =>
  (object?.metadata?.ownerReferences ?? []).filter((ref) => ref.kind === 'ClusterRole').map((ref) => `${ref.name}/${ref.uid}`);

const configurationCreates = (requests: readonly RequestRecord[], since: number) =>
  requests.filter((r) => r.verb === 'create' && KINDS.some((k) => k === r.resource) && r.startedAt > since);

/** Resolves once `condition` holds, checked after every API request (the leader's writes among them). */
async function until(cluster: ClusterHarness, condition: () => boolean, what: string): Promise<void> {
  if (condition()) return;
  await cluster.api.waitForRequest(() => condition(), { timeoutMs: 20_000 }).catch(() => {
    throw new Error(`not within 20 s: ${what}`);
  });
}

/** The leader reads the ClusterRole at every reconcile pass: resolves after `count` more passes. */
async function rolePasses(cluster: ClusterHarness, count: number): Promise<void> {
  let since = performance.now();
  for (let i = 0; i < count; i++) {
    const read = await cluster.api.waitForRequest((r) => r.verb === 'get' && r.resource === 'clusterroles' && r.startedAt > since, { timeoutMs: 20_000 });
    since = read.startedAt;
  }
}

t.test('owner ClusterRole deleted and re-created: ownerReference absent meanwhile, then on the new uid, and no fight with the garbage collector', async (t) => {
  const cluster = await ClusterHarness.start(t);
  const gc = cluster.api.startGarbageCollector();
  t.teardown(() => gc.stop());
  cluster.seedDeployment(['kas-a']);
  const firstUid = cluster.api.store.get('clusterroles', undefined, NAME)!.metadata!.uid!;
  const replica = await cluster.startReplica(t, 'kas-a'); // resync every 2 s
  for (const kind of KINDS) t.same(roleReferences(cluster.api.store.get(kind, undefined, NAME)), [`${NAME}/${firstUid}`], `${kind}: owned by the ClusterRole`);

  cluster.api.store.delete('clusterroles', undefined, NAME);
  // The collector deletes both configurations and the leader's watch restores them at once. A
  // pass that read the ClusterRole just before it went may still write the old uid once (and see
  // that copy collected too); what matters is that it settles.
  const unowned = () => KINDS.every((kind) => cluster.api.store.get(kind, undefined, NAME) && roleReferences(cluster.api.store.get(kind, undefined, NAME)).length === 0);
  await until(cluster, unowned, 'both configurations restored without an ownerReference');
  let settledAt = performance.now();
  await rolePasses(cluster, 2); // two more passes (resyncs) with the ClusterRole missing
  t.ok(unowned(), 'present, with no ownerReference, while the ClusterRole is missing');
  t.same(configurationCreates(cluster.api.requests, settledAt), [], 'not collected and re-created again: no fight');
  t.match(await replica.child.waitForLog((l) => /owner ClusterRole does not exist/.test(l.msg), 10_000), { level: 'warn', clusterRole: NAME }, 'a warning says why the ownerReference is gone');

  const secondUid = cluster.api.store.put('clusterroles', { metadata: { name: NAME }, rules: [] }).metadata!.uid!;
  t.not(secondUid, firstUid);
  const collectedBefore = gc.collected.length;
  const owned = () => KINDS.every((kind) => roleReferences(cluster.api.store.get(kind, undefined, NAME)).join() === `${NAME}/${secondUid}`);
  await until(cluster, owned, 'both configurations owned by the new ClusterRole (within a resync)');
  settledAt = performance.now();
  await rolePasses(cluster, 2);
  t.ok(owned(), 'owned by the new ClusterRole');
  t.same(configurationCreates(cluster.api.requests, settledAt), [], 'nothing re-created');
  t.equal(gc.collected.length, collectedBefore, 'nothing collected after the new ClusterRole appeared');
  t.equal((await replica.child.stop()).code, 0);
});
