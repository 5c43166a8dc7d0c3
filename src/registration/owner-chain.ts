import type { V1Deployment, V1OwnerReference } from '@kubernetes/client-node';
import { readOrUndefined } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { callApi } from '../kube/request-deadline.js';

/**
 * What the owner chain Pod -> ReplicaSet -> Deployment says about this process's install. Only a
 * Deployment's own state can prove the install is going away; every other finding is told apart
 * so the decision can say why it keeps the configurations. A failed read throws instead.
 */
export type OwnerChain =
  /** The pod itself is not there (404): force-deleted, or a wrong --pod-name. */
  | { kind: 'pod-absent'; pod: string }
  /** Owned by anything but a Deployment (StatefulSet, DaemonSet, Rollout, CloneSet, nothing). */
  | { kind: 'not-a-deployment'; owner: string }
  /** The owning Deployment (undefined: it is gone), and how it was found. */
  | { kind: 'deployment'; name: string; via: string; deployment: V1Deployment | undefined };

export interface PodRef {
  namespace: string;
  podName: string;
}

/** The Deployment controller labels every pod and names every ReplicaSet `<deployment>-<hash>` with it. */
const POD_TEMPLATE_HASH = 'pod-template-hash';

const controllerOf = (refs: V1OwnerReference[] | undefined): V1OwnerReference | undefined => refs?.find((ref) => ref.controller === true);

/** apps/v1 kinds only: an Argo Rollout or an OpenKruise CloneSet has its own API group. */
const isAppsKind = (ref: V1OwnerReference, kind: string): boolean => ref.kind === kind && ref.apiVersion.split('/')[0] === 'apps';

const describe = (ref: V1OwnerReference): string => `${ref.kind} ${ref.name} (${ref.apiVersion})`;

/** `<deployment>-<hash>` minus `-<hash>`, or undefined when the name is not built that way. */
export function deploymentNameOf(replicaSetName: string, podTemplateHash: string | undefined): string | undefined {
  if (!podTemplateHash) return undefined;
  const suffix = `-${podTemplateHash}`;
  if (!replicaSetName.endsWith(suffix) || replicaSetName.length === suffix.length) return undefined;
  return replicaSetName.slice(0, -suffix.length);
}

/**
 * Reads Pod -> ReplicaSet -> Deployment, each read bounded by `signal`. When the ReplicaSet is
 * already gone (a Deployment with a small revisionHistoryLimit prunes old ones during a rollout),
 * the Deployment is found by the ReplicaSet's name minus the pod's pod-template-hash.
 */
export async function readOwnerChain(api: KubeApi, ref: PodRef, signal: AbortSignal): Promise<OwnerChain> {
  const { namespace, podName } = ref;
  const pod = await readOrUndefined(() => callApi(signal, (o) => api.core.readNamespacedPod({ name: podName, namespace }, o)));
  if (!pod) return { kind: 'pod-absent', pod: `${namespace}/${podName}` };
  const owner = controllerOf(pod.metadata?.ownerReferences);
  if (!owner) return { kind: 'not-a-deployment', owner: `pod ${podName} has no controller (a bare pod)` };
  if (!isAppsKind(owner, 'ReplicaSet')) return { kind: 'not-a-deployment', owner: `pod ${podName} is owned by ${describe(owner)}` };

  const replicaSet = await readOrUndefined(() => callApi(signal, (o) => api.apps.readNamespacedReplicaSet({ name: owner.name, namespace }, o)));
  if (replicaSet) {
    const deploymentRef = controllerOf(replicaSet.metadata?.ownerReferences);
    if (!deploymentRef) return { kind: 'not-a-deployment', owner: `ReplicaSet ${owner.name} has no controller` };
    if (!isAppsKind(deploymentRef, 'Deployment')) return { kind: 'not-a-deployment', owner: `ReplicaSet ${owner.name} is owned by ${describe(deploymentRef)}` };
    return await deploymentOf(api, namespace, deploymentRef.name, `through ReplicaSet ${owner.name}`, signal);
  }
  const hash = pod.metadata?.labels?.[POD_TEMPLATE_HASH];
  const name = deploymentNameOf(owner.name, hash);
  if (!name) {
    return {
      kind: 'not-a-deployment',
      owner: `ReplicaSet ${owner.name} is gone and its name does not end in the pod's ${POD_TEMPLATE_HASH} (${hash ?? 'none'}): its Deployment cannot be found`,
    };
  }
  return await deploymentOf(api, namespace, name, `by name: ReplicaSet ${owner.name} is gone, minus ${POD_TEMPLATE_HASH} ${hash}`, signal);
}

async function deploymentOf(api: KubeApi, namespace: string, name: string, via: string, signal: AbortSignal): Promise<OwnerChain> {
  const deployment = await readOrUndefined(() => callApi(signal, (o) => api.apps.readNamespacedDeployment({ name, namespace }, o)));
  return { kind: 'deployment', name, via, deployment };
}
