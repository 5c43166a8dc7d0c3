/**
 * The disruption controller (pkg/controller/disruption): each PodDisruptionBudget's status from
 * the Pods it selects: expectedPods from the scale of their controllers (a ReplicaSet of a
 * Deployment counts the Deployment's replicas, once), desiredHealthy from maxUnavailable or
 * minAvailable, currentHealthy the ready Pods not being deleted and not just evicted
 * (`disruptedPods`, kept until the Pod's deletion shows or two minutes pass), and
 * disruptionsAllowed, which the eviction subresource spends. Not done: Pods of other controllers
 * than ReplicaSets and Deployments (StatefulSets, custom resources with a scale) count as
 * unmanaged, and a budget with such Pods is computed as if they were not there.
 */
import type { KubeObject } from '../fake-apiserver/index.js';
import { selectorMatches, type LabelSelector } from '../fake-apiserver/label-selector.js';
import type { ClusterClient } from './api-client.js';
import { controllerRef, podCondition, rec, replicasOf, specOf } from './workload-objects.js';
import type { SyncResult } from './work-queue.js';

/** How long an evicted Pod stays in disruptedPods without its deletion showing (DeletionTimeout). */
const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

/** intstr.GetScaledValueFromIntOrPercent, rounding up as the disruption controller does. */
function scaled(value: unknown, total: number): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(String(value ?? '0'));
  return m ? Math.ceil((Number(m[1]) * total) / 100) : 0;
}

export class DisruptionController {
  constructor(private readonly client: ClusterClient) {}

  /** The budgets of `namespace` that select `pod` (a Pod event requeues them). */
  budgetsFor(pod: KubeObject): string[] {
    const labels = pod.metadata?.labels ?? {};
    return this.client
      .list('poddisruptionbudgets', pod.metadata?.namespace)
      .filter((pdb) => selectorMatches(specOf(pdb).selector as LabelSelector | undefined, labels))
      .map((pdb) => pdb.metadata?.name ?? '');
  }

  /** The scale of the controller a Pod belongs to, keyed by that controller's uid; undefined when unmanaged. */
  private scaleOf(pod: KubeObject): { uid: string; replicas: number } | undefined {
    const owner = controllerRef(pod);
    if (owner?.kind !== 'ReplicaSet') return undefined;
    const replicaSet = this.client.get({ resource: 'replicasets', namespace: pod.metadata?.namespace, name: owner.name });
    if (!replicaSet || replicaSet.metadata?.uid !== owner.uid) return undefined;
    const deploymentRef = controllerRef(replicaSet);
    if (deploymentRef?.kind === 'Deployment') {
      const deployment = this.client.get({ resource: 'deployments', namespace: pod.metadata?.namespace, name: deploymentRef.name });
      if (deployment && deployment.metadata?.uid === deploymentRef.uid) return { uid: deploymentRef.uid, replicas: replicasOf(deployment) };
    }
    return { uid: owner.uid, replicas: replicasOf(replicaSet) };
  }

  async sync(namespace: string, name: string): Promise<SyncResult> {
    const pdb = this.client.get({ resource: 'poddisruptionbudgets', namespace, name });
    if (!pdb) return;
    const spec = specOf(pdb);
    const pods = this.client.list('pods', namespace).filter((pod) => selectorMatches(spec.selector as LabelSelector | undefined, pod.metadata?.labels ?? {}));
    const scales = new Map<string, number>();
    for (const pod of pods) {
      const scale = this.scaleOf(pod);
      if (scale) scales.set(scale.uid, scale.replicas);
    }
    const expectedPods = [...scales.values()].reduce((sum, n) => sum + n, 0);
    const desiredHealthy = spec.maxUnavailable !== undefined ? Math.max(0, expectedPods - scaled(spec.maxUnavailable, expectedPods)) : scaled(spec.minAvailable, expectedPods);
    const now = Date.now();
    const previous = rec(rec(pdb.status).disruptedPods);
    const disruptedPods: Record<string, string> = {};
    for (const [podName, at] of Object.entries(previous)) {
      const pod = pods.find((p) => p.metadata?.name === podName);
      if (pod && !pod.metadata?.deletionTimestamp && now - Date.parse(String(at)) < DELETION_TIMEOUT_MS) disruptedPods[podName] = String(at);
    }
    const currentHealthy = pods.filter((pod) => !pod.metadata?.deletionTimestamp && !((pod.metadata?.name ?? '') in disruptedPods) && podCondition(pod, 'Ready')?.status === 'True').length;
    const status = {
      observedGeneration: pdb.metadata?.generation ?? 1,
      disruptionsAllowed: Math.max(0, currentHealthy - desiredHealthy),
      currentHealthy,
      desiredHealthy,
      expectedPods,
      ...(Object.keys(disruptedPods).length > 0 ? { disruptedPods } : {}),
      conditions: [
        {
          type: 'DisruptionAllowed',
          status: currentHealthy > desiredHealthy ? 'True' : 'False',
          reason: currentHealthy > desiredHealthy ? 'SufficientPods' : 'InsufficientPods',
          message: '',
          observedGeneration: pdb.metadata?.generation ?? 1,
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      ],
    };
    const current = rec(pdb.status);
    const same = ['observedGeneration', 'disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods', 'disruptedPods'].every(
      (key) => JSON.stringify(current[key]) === JSON.stringify((status as Record<string, unknown>)[key]),
    );
    if (!same) await this.client.update({ resource: 'poddisruptionbudgets', namespace, name }, { ...pdb, status }, 'status');
    // A recorded eviction whose deletion never shows drops out after the timeout: look again then.
    return Object.keys(disruptedPods).length > 0 ? { requeueAfterMs: DELETION_TIMEOUT_MS } : undefined;
  }
}
