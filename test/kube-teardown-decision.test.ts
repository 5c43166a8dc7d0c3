// Every branch of the teardown decision, against the API test double over real HTTPS: only a
// Deployment that is gone, being deleted or scaled to zero (or no pod at all) deletes.
import t from 'tap';
import type { TeardownPolicy } from '../src/config/types.js';
import { decideTeardown, type TeardownDecision } from '../src/registration/teardown-decision.js';
import { startInProcessKube, type InProcessKube } from './support/kube/in-process-kube.js';
import { seedInstall, seedPodOwnedBy, seedReplicaSetOwnedBy } from './support/kube/owner-chain-fixtures.js';
import { EVENT_MS } from './support/deadline.js';

const NAME = 'kube-admission-server';
const POD = 'kas-a';

// One double for the file (starting one costs a second or more on a busy machine); each case
// gets a namespace of its own, so the store, the faults and the request log stay apart.
const shared = await startInProcessKube(t, 'kas');
let cases = 0;
let NS = 'kas';

async function newCase(): Promise<InProcessKube> {
  NS = `case-${++cases}`;
  shared.api.store.createNamespace(NS);
  shared.api.faults.clear();
  return shared;
}

/**
 * The cases about the decision get a busy machine's deadline, not the server's: the first read of
 * the file (a fresh client, TLS and all) passed 3 s in a CI run. The deadline itself has its own
 * case below.
 */
async function decide(cluster: InProcessKube, policy: TeardownPolicy = 'auto', options: { inPod?: boolean; deadlineMs?: number } = {}): Promise<TeardownDecision> {
  return await decideTeardown(policy, {
    api: cluster.kube,
    namespace: NS,
    podName: POD,
    inPod: options.inPod ?? true,
    deadlineMs: options.deadlineMs ?? EVENT_MS,
    signal: new AbortController().signal,
  });
}

const reads = (cluster: InProcessKube) => cluster.api.requests.filter((r) => r.verb === 'get' && r.namespace === NS).map((r) => `${r.resource}/${r.name}`);

t.test('always and never decide without reading anything', async (t) => {
  const cluster = await newCase();
  seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 2 });
  t.same(await decide(cluster, 'always'), { teardown: true, why: '--teardown always' });
  t.same(await decide(cluster, 'never'), { teardown: false, why: '--teardown never' });
  t.same(reads(cluster), []);
});

t.test('auto outside a pod (a developer machine with a kubeconfig): deletes, reading nothing', async (t) => {
  const cluster = await newCase();
  const decision = await decide(cluster, 'auto', { inPod: false });
  t.equal(decision.teardown, true);
  t.match(decision.why, /not running in a pod/);
  t.same(reads(cluster), []);
});

t.test('auto, Deployment found through its ReplicaSet', async (t) => {
  t.test('wanting replicas (a rolling update or a scale-down): keeps', async (t) => {
    const cluster = await newCase();
    seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 2 });
    const decision = await decide(cluster);
    t.equal(decision.teardown, false);
    t.match(decision.why, /Deployment kube-admission-server wants 2 replicas \(found through ReplicaSet kube-admission-server-5f8d7c9b6d\)/);
    t.same(reads(cluster), [`pods/${POD}`, `replicasets/${NAME}-5f8d7c9b6d`, `deployments/${NAME}`], 'Pod -> ReplicaSet -> Deployment');
  });

  t.test('deleted: deletes', async (t) => {
    const cluster = await newCase();
    seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 2 });
    cluster.api.store.delete('deployments', NS, NAME);
    t.match(await decide(cluster), { teardown: true, why: /Deployment kube-admission-server is gone \(found through ReplicaSet/ });
  });

  t.test('being deleted (deletionTimestamp, foreground deletion): deletes', async (t) => {
    const cluster = await newCase();
    seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 2 });
    cluster.api.store.markDeleting('deployments', NS, NAME);
    t.match(await decide(cluster), { teardown: true, why: /Deployment kube-admission-server is being deleted/ });
  });

  t.test('scaled to zero: deletes', async (t) => {
    const cluster = await newCase();
    seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 2 });
    cluster.api.store.scaleDeployment(NS, NAME, 0);
    t.match(await decide(cluster), { teardown: true, why: /Deployment kube-admission-server is scaled to zero/ });
  });
  t.end();
});

t.test('auto, ReplicaSet already gone (pruned by revisionHistoryLimit): the Deployment is found by name', async (t) => {
  t.test('Deployment still wanting replicas: keeps', async (t) => {
    const cluster = await newCase();
    const install = seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 3 });
    cluster.api.store.delete('replicasets', NS, install.replicaSetName);
    const decision = await decide(cluster);
    t.equal(decision.teardown, false);
    t.match(decision.why, /Deployment kube-admission-server wants 3 replicas \(found by name: ReplicaSet kube-admission-server-5f8d7c9b6d is gone, minus pod-template-hash 5f8d7c9b6d\)/);
    t.same(reads(cluster), [`pods/${POD}`, `replicasets/${NAME}-5f8d7c9b6d`, `deployments/${NAME}`]);
  });

  t.test('Deployment gone too (an uninstall, background deletion): deletes', async (t) => {
    const cluster = await newCase();
    const install = seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 3 });
    cluster.api.store.delete('deployments', NS, NAME);
    cluster.api.store.delete('replicasets', NS, install.replicaSetName);
    t.match(await decide(cluster), { teardown: true, why: /Deployment kube-admission-server is gone \(found by name/ });
  });

  t.test('a Deployment name with dashes is cut only at the hash', async (t) => {
    const cluster = await newCase();
    const install = seedInstall(cluster.api.store, NS, { name: 'my-web-hooks', podNames: [POD], replicas: 0, hash: '7b9c' });
    cluster.api.store.delete('replicasets', NS, install.replicaSetName);
    t.match(await decide(cluster), { teardown: true, why: /Deployment my-web-hooks is scaled to zero/ });
  });

  t.test('no pod-template-hash label to cut the name with: keeps', async (t) => {
    const cluster = await newCase();
    const install = seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 2 });
    const pod = install.pods[0]!;
    delete pod.metadata!.labels!['pod-template-hash'];
    cluster.api.store.put('pods', pod);
    cluster.api.store.delete('replicasets', NS, install.replicaSetName);
    cluster.api.store.delete('deployments', NS, NAME);
    t.match(await decide(cluster), { teardown: false, why: /ReplicaSet kube-admission-server-5f8d7c9b6d is gone and its name does not end in the pod's pod-template-hash \(none\)/ });
  });
  t.end();
});

t.test('auto, any owner but a Deployment keeps, and says which', async (t) => {
  const owners = [
    { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'kas' },
    { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'kas' },
    { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'kas' },
    { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'kas' },
    { apiVersion: 'batch/v1', kind: 'Job', name: 'kas' },
  ];
  for (const owner of owners) {
    t.test(`${owner.kind} (${owner.apiVersion})`, async (t) => {
      const cluster = await newCase();
      seedPodOwnedBy(cluster.api.store, NS, POD, owner);
      const decision = await decide(cluster);
      t.equal(decision.teardown, false);
      t.match(decision.why, `pod ${POD} is owned by ${owner.kind} kas (${owner.apiVersion})`);
      t.match(decision.why, /ClusterRole ownerReference still garbage-collects them on uninstall/);
      t.same(reads(cluster), [`pods/${POD}`], 'nothing but the pod is read');
    });
  }

  t.test('a bare pod (no controller)', async (t) => {
    const cluster = await newCase();
    seedPodOwnedBy(cluster.api.store, NS, POD, undefined);
    t.match(await decide(cluster), { teardown: false, why: /pod kas-a has no controller \(a bare pod\)/ });
  });

  t.test('a ReplicaSet of an Argo Rollout', async (t) => {
    const cluster = await newCase();
    seedReplicaSetOwnedBy(cluster.api.store, NS, POD, { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'kas' });
    t.match(await decide(cluster), { teardown: false, why: /ReplicaSet kas-6c9f8b7d5 is owned by Rollout kas \(argoproj.io\/v1alpha1\)/ });
  });

  t.test('a ReplicaSet with no controller', async (t) => {
    const cluster = await newCase();
    seedReplicaSetOwnedBy(cluster.api.store, NS, POD, undefined);
    t.match(await decide(cluster), { teardown: false, why: /ReplicaSet standalone-6c9f8b7d5 has no controller/ });
  });
  t.end();
});

t.test('auto, in a pod whose pod cannot be found (force-deleted): keeps', async (t) => {
  const cluster = await newCase();
  seedInstall(cluster.api.store, NS, { name: NAME, podNames: ['kas-other'], replicas: 0 });
  t.match(await decide(cluster), { teardown: false, why: new RegExp(`pod ${NS}/kas-a not found although running in a pod`) });
});

t.test('auto, chain unreadable: keeps, and says why', async (t) => {
  t.test('a 5xx on the ReplicaSet', async (t) => {
    const cluster = await newCase();
    seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 0 });
    cluster.api.faults.add({ resource: 'replicasets', verb: 'get' }, { status: 503 });
    t.match(await decide(cluster), { teardown: false, why: /could not read the owner chain \(503 .*\); keeping the configurations/ });
  });

  t.test('403: the Role lost (or never had) the right to read the Deployment', async (t) => {
    const cluster = await newCase();
    seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 0 });
    t.teardown(() => cluster.api.setRbac(undefined));
    cluster.api.setRbac({
      roles: [{ metadata: { name: 'partial', namespace: NS }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }, { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['get'] }] }],
    });
    t.match(await decide(cluster), { teardown: false, why: /could not read the owner chain \(403 Forbidden: .*deployments/ });
  });

  t.test('an API that never answers: cut at the decision deadline, not the 5 s request timeout', async (t) => {
    const cluster = await newCase();
    seedInstall(cluster.api.store, NS, { name: NAME, podNames: [POD], replicas: 0 });
    cluster.api.faults.add({ resource: 'deployments', verb: 'get' }, { hang: true });
    const started = performance.now();
    const decision = await decide(cluster, 'auto', { deadlineMs: 400 });
    const ms = performance.now() - started;
    t.match(decision, { teardown: false, why: /could not read the owner chain \(TimeoutError: timed out after 400 ms\)/ });
    t.ok(ms < 4000, `decided in ${Math.round(ms)} ms: the deadline, not a request timeout (5 s), ended the wait`);
  });
  t.end();
});
