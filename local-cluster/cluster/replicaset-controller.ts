/**
 * The ReplicaSet controller: keeps spec.replicas Pods from the template (generateName
 * `<replicaset>-`, the template's labels, a controller ownerReference with blockOwnerDeletion),
 * deletes the surplus in kube-controller-manager's order (unscheduled, pending, not ready,
 * newest first), and reports replicas, readyReplicas and availableReplicas in status. Pods are
 * created through the API, so admission applies to them; a refusal becomes a FailedCreate event.
 * Not done: adopting orphaned Pods that match the selector.
 */
import { clone, type KubeObject } from '../fake-apiserver/index.js';
import { isNotFound, type ClusterClient } from './api-client.js';
import type { EventRecorder } from './events.js';
import type { SyncResult } from './work-queue.js';
import {
  isControlledBy,
  isPodActive,
  isPodAvailable,
  isPodReady,
  podPhase,
  rec,
  records,
  replicasOf,
  specOf,
  statusOf,
  templateOf,
} from './workload-objects.js';

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/** ActivePods' order: the pods to delete first come first. */
function deletionOrder(a: KubeObject, b: KubeObject): number {
  const assigned = (p: KubeObject): number => (specOf(p).nodeName ? 1 : 0);
  if (assigned(a) !== assigned(b)) return assigned(a) - assigned(b);
  const phase = (p: KubeObject): number => PHASE_RANK[podPhase(p)] ?? 1;
  if (phase(a) !== phase(b)) return phase(a) - phase(b);
  const ready = (p: KubeObject): number => (isPodReady(p) ? 1 : 0);
  if (ready(a) !== ready(b)) return ready(a) - ready(b);
  const restarts = (p: KubeObject): number => records(statusOf(p).containerStatuses).reduce((sum, c) => sum + Number(c.restartCount ?? 0), 0);
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  return String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? ''));
}

export class ReplicaSetController {
  constructor(
    private readonly client: ClusterClient,
    private readonly events: EventRecorder,
  ) {}

  podsOf(replicaSet: KubeObject): KubeObject[] {
    return this.client.list('pods', replicaSet.metadata?.namespace).filter((pod) => isControlledBy(pod, replicaSet));
  }

  async sync(namespace: string, name: string): Promise<SyncResult> {
    const replicaSet = this.client.get({ resource: 'replicasets', namespace, name });
    if (!replicaSet || replicaSet.metadata?.deletionTimestamp) return;
    const active = this.podsOf(replicaSet).filter(isPodActive);
    const diff = replicasOf(replicaSet) - active.length;
    if (diff > 0) {
      for (let i = 0; i < diff; i++) await this.createPod(replicaSet);
    } else if (diff < 0) {
      for (const pod of [...active].sort(deletionOrder).slice(0, -diff)) await this.deletePod(replicaSet, pod);
    }
    await this.updateStatus(replicaSet);
    // Availability after minReadySeconds is a matter of time, not of an event.
    const minReady = Number(specOf(replicaSet).minReadySeconds ?? 0);
    return minReady > 0 ? { requeueAfterMs: 1000 } : undefined;
  }

  private async createPod(replicaSet: KubeObject): Promise<void> {
    const template = clone(templateOf(replicaSet));
    const meta = rec(template.metadata);
    const rsMeta = replicaSet.metadata ?? {};
    const pod: KubeObject = {
      metadata: {
        generateName: `${rsMeta.name ?? ''}-`,
        namespace: rsMeta.namespace,
        labels: rec(meta.labels) as Record<string, string>,
        annotations: rec(meta.annotations) as Record<string, string>,
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rsMeta.name ?? '', uid: rsMeta.uid ?? '', controller: true, blockOwnerDeletion: true }],
      },
      spec: rec(template.spec),
    };
    try {
      const created = await this.client.create('pods', rsMeta.namespace, pod);
      this.events.record(replicaSet, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata?.name ?? ''}`);
    } catch (error) {
      this.events.record(replicaSet, 'Warning', 'FailedCreate', `Error creating: ${(error as Error).message.replace(/^\d+: /, '')}`);
      throw error;
    }
  }

  private async deletePod(replicaSet: KubeObject, pod: KubeObject): Promise<void> {
    try {
      await this.client.delete({ resource: 'pods', namespace: pod.metadata?.namespace, name: pod.metadata?.name ?? '' }, { uid: pod.metadata?.uid });
      this.events.record(replicaSet, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata?.name ?? ''}`);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  private async updateStatus(replicaSet: KubeObject): Promise<void> {
    const current = this.client.get({ resource: 'replicasets', namespace: replicaSet.metadata?.namespace, name: replicaSet.metadata?.name ?? '' });
    if (!current) return;
    const active = this.podsOf(current).filter(isPodActive);
    const minReady = Number(specOf(current).minReadySeconds ?? 0);
    const labels = rec(rec(templateOf(current).metadata).labels);
    const status = {
      replicas: active.length,
      fullyLabeledReplicas: active.filter((p) => Object.entries(labels).every(([k, v]) => p.metadata?.labels?.[k] === v)).length,
      readyReplicas: active.filter(isPodReady).length,
      availableReplicas: active.filter((p) => isPodAvailable(p, minReady)).length,
      observedGeneration: current.metadata?.generation ?? 1,
    };
    if (JSON.stringify(statusOf(current)) === JSON.stringify(status)) return;
    await this.client.mergePatch({ resource: 'replicasets', namespace: current.metadata?.namespace, name: current.metadata?.name ?? '' }, { status }, 'status');
  }
}
