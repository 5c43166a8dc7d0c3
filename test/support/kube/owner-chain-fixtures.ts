/**
 * Owner chains as the controllers write them, seeded into the API test double's store: a
 * Deployment's ReplicaSet is named `<deployment>-<pod-template-hash>` and its pods carry that
 * label; StatefulSets, DaemonSets, Argo Rollouts, OpenKruise CloneSets own pods (or ReplicaSets)
 * the same way with their own kinds. Made here, independently of src/registration/owner-chain.ts.
 */
import { randomUUID } from 'node:crypto';
import type { KubeObject, ObjectStore, OwnerReference } from '../../../local-cluster/fake-apiserver/index.js';

export interface ForeignOwner {
  apiVersion: string;
  kind: string;
  name: string;
}

/** What a controller sets on the objects it creates. */
export function controllerReference(owner: KubeObject | ForeignOwner): OwnerReference {
  if ('metadata' in owner && owner.metadata) {
    return { apiVersion: owner.apiVersion ?? '', kind: owner.kind ?? '', name: owner.metadata.name ?? '', uid: owner.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
  }
  const foreign = owner as ForeignOwner;
  // Kinds the double does not serve: a uid made up like the API server would.
  return { apiVersion: foreign.apiVersion, kind: foreign.kind, name: foreign.name, uid: randomUUID(), controller: true, blockOwnerDeletion: true };
}

export interface InstallFixture {
  deployment: KubeObject;
  replicaSet: KubeObject;
  pods: KubeObject[];
  replicaSetName: string;
}

/** Deployment `name` -> ReplicaSet `<name>-<hash>` -> one Pod per name, labelled pod-template-hash=<hash>. */
export function seedInstall(
  store: ObjectStore,
  namespace: string,
  options: { name: string; podNames: readonly string[]; replicas: number; hash?: string },
): InstallFixture {
  const hash = options.hash ?? '5f8d7c9b6d';
  const labels = { app: options.name };
  const deployment = store.put('deployments', {
    metadata: { name: options.name, namespace },
    spec: { replicas: options.replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'server', image: 'kas' }] } } },
  });
  const replicaSetName = `${options.name}-${hash}`;
  const replicaSet = store.put('replicasets', {
    metadata: { name: replicaSetName, namespace, labels: { ...labels, 'pod-template-hash': hash }, ownerReferences: [controllerReference(deployment)] },
    spec: { replicas: options.replicas, selector: { matchLabels: { ...labels, 'pod-template-hash': hash } } },
  });
  const pods = options.podNames.map((podName) =>
    store.put('pods', {
      metadata: { name: podName, namespace, labels: { ...labels, 'pod-template-hash': hash }, ownerReferences: [controllerReference(replicaSet)] },
      spec: { containers: [{ name: 'server', image: 'kas' }] },
    }),
  );
  return { deployment, replicaSet, pods, replicaSetName };
}

/** A pod owned by `owner` (or by nothing: a bare pod). */
export function seedPodOwnedBy(store: ObjectStore, namespace: string, podName: string, owner: KubeObject | ForeignOwner | undefined, labels: Record<string, string> = {}): KubeObject {
  return store.put('pods', {
    metadata: { name: podName, namespace, labels, ...(owner ? { ownerReferences: [controllerReference(owner)] } : {}) },
    spec: { containers: [{ name: 'server', image: 'kas' }] },
  });
}

/** A ReplicaSet owned by `owner` (an Argo Rollout owns ReplicaSets too), with one pod. */
export function seedReplicaSetOwnedBy(store: ObjectStore, namespace: string, podName: string, owner: ForeignOwner | undefined, hash = '6c9f8b7d5'): KubeObject {
  const replicaSet = store.put('replicasets', {
    metadata: { name: `${owner?.name ?? 'standalone'}-${hash}`, namespace, ...(owner ? { ownerReferences: [controllerReference(owner)] } : {}) },
    spec: { replicas: 2, selector: { matchLabels: { 'pod-template-hash': hash } } },
  });
  return seedPodOwnedBy(store, namespace, podName, replicaSet, { 'pod-template-hash': hash });
}
