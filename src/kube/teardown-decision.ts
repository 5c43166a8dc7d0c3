import type { V1OwnerReference } from '@kubernetes/client-node';
import type { TeardownPolicy } from '../config/types.js';
import { formatApiFailure, readOrUndefined } from './api-errors.js';
import type { KubeApi } from './client.js';
import { callApi } from './request-deadline.js';

export interface TeardownDecision {
  teardown: boolean;
  why: string;
}

const controllerOf = (refs: V1OwnerReference[] | undefined, kind: string): V1OwnerReference | undefined =>
  refs?.find((ref) => ref.controller === true && ref.kind === kind);

/** Follows Pod -> ReplicaSet -> Deployment and says whether the install is going away. */
async function decideFromOwnerChain(api: KubeApi, namespace: string, podName: string, signal: AbortSignal): Promise<TeardownDecision> {
  const pod = await readOrUndefined(() => callApi(signal, (o) => api.core.readNamespacedPod({ name: podName, namespace }, o)));
  if (!pod) return { teardown: true, why: `no pod ${namespace}/${podName}: not running as a pod` };
  const replicaSetRef = controllerOf(pod.metadata?.ownerReferences, 'ReplicaSet');
  if (!replicaSetRef) return { teardown: true, why: `pod ${podName} is not managed by a Deployment: nothing replaces it` };
  const replicaSet = await readOrUndefined(() =>
    callApi(signal, (o) => api.apps.readNamespacedReplicaSet({ name: replicaSetRef.name, namespace }, o)),
  );
  if (!replicaSet) return { teardown: true, why: `ReplicaSet ${replicaSetRef.name} is gone: the Deployment was deleted` };
  const deploymentRef = controllerOf(replicaSet.metadata?.ownerReferences, 'Deployment');
  if (!deploymentRef) return { teardown: true, why: `ReplicaSet ${replicaSetRef.name} has no Deployment` };
  const deployment = await readOrUndefined(() =>
    callApi(signal, (o) => api.apps.readNamespacedDeployment({ name: deploymentRef.name, namespace }, o)),
  );
  if (!deployment) return { teardown: true, why: `Deployment ${deploymentRef.name} is gone` };
  if (deployment.metadata?.deletionTimestamp) return { teardown: true, why: `Deployment ${deploymentRef.name} is being deleted` };
  if (deployment.spec?.replicas === 0) return { teardown: true, why: `Deployment ${deploymentRef.name} is scaled to zero` };
  return {
    teardown: false,
    why: `Deployment ${deploymentRef.name} wants ${deployment.spec?.replicas ?? 1} replicas: a rolling update or scale-down keeps enforcement`,
  };
}

/**
 * Whether shutdown should delete the configurations. `auto` deletes only when the owning
 * Deployment is deleted, scaled to zero or gone (or there is no pod at all, e.g. a developer's
 * machine); when the chain cannot be read it keeps them: the ClusterRole ownerReference
 * garbage-collects them on uninstall, while a wrong delete silently drops enforcement.
 */
export async function decideTeardown(
  policy: TeardownPolicy,
  context: { api: KubeApi; namespace: string; podName: string; signal: AbortSignal },
): Promise<TeardownDecision> {
  if (policy === 'always') return { teardown: true, why: '--teardown always' };
  if (policy === 'never') return { teardown: false, why: '--teardown never' };
  try {
    return await decideFromOwnerChain(context.api, context.namespace, context.podName, context.signal);
  } catch (error) {
    return { teardown: false, why: `could not read the owner chain (${formatApiFailure(error)}); keeping the configurations` };
  }
}
