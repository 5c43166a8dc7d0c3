/**
 * The Deployment controller: one ReplicaSet per pod template (`<deployment>-<pod-template-hash>`,
 * the hash in its selector, labels and template), rolled per the strategy:
 * RollingUpdate scales the new ReplicaSet up within maxSurge and the old ones down within
 * maxUnavailable, counting only available Pods (the rolling.go arithmetic); Recreate scales the
 * old ones to zero and waits for their Pods to go. Revisions and the desired/max-replicas
 * annotations, revisionHistoryLimit, and the status kubectl rollout status reads
 * (observedGeneration, updated/ready/available replicas, Available and Progressing conditions).
 * Not done: pausing, progressDeadlineSeconds, proportional scaling of several active ReplicaSets.
 */
import { clone, type KubeObject } from '../fake-apiserver/index.js';
import { kubeTime } from '../fake-apiserver/objects.js';
import { isDeepStrictEqual } from 'node:util';
import type { ClusterClient } from './api-client.js';
import type { EventRecorder } from './events.js';
import { podTemplateHash } from './pod-template-hash.js';
import { annotation, isControlledBy, rec, records, replicasOf, specOf, statusOf, templateOf } from './workload-objects.js';
import type { SyncResult } from './work-queue.js';

const HASH_LABEL = 'pod-template-hash';
const REVISION = 'deployment.kubernetes.io/revision';
const DESIRED = 'deployment.kubernetes.io/desired-replicas';
const MAX = 'deployment.kubernetes.io/max-replicas';

/** intstr.GetScaledValueFromIntOrPercent. */
function scaled(value: unknown, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(String(value ?? '0'));
  if (!m) return 0;
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** ResolveFenceposts: both zero is not allowed to block a rollout, so maxUnavailable becomes 1. */
function fenceposts(deployment: KubeObject): { maxSurge: number; maxUnavailable: number } {
  const strategy = rec(specOf(deployment).strategy);
  if (strategy.type === 'Recreate') return { maxSurge: 0, maxUnavailable: replicasOf(deployment) };
  const rolling = rec(strategy.rollingUpdate);
  const replicas = replicasOf(deployment);
  const maxSurge = scaled(rolling.maxSurge ?? '25%', replicas, true);
  let maxUnavailable = scaled(rolling.maxUnavailable ?? '25%', replicas, false);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable };
}

const rsReplicas = (rs: KubeObject): number => replicasOf(rs);
const rsStatus = (rs: KubeObject, field: string): number => Number(statusOf(rs)[field] ?? 0);
const revisionOf = (rs: KubeObject): number => Number(annotation(rs, REVISION) ?? 0);

/** The template without its pod-template-hash label, as EqualIgnoreHash compares them. */
function withoutHash(template: unknown): unknown {
  const copy = clone(rec(template));
  const meta = rec(copy.metadata);
  const labels = { ...rec(meta.labels) };
  delete labels[HASH_LABEL];
  copy.metadata = { ...meta, labels };
  return copy;
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string, previous: Record<string, unknown>[]): Record<string, unknown> {
  const now = kubeTime();
  const old = previous.find((c) => c.type === type);
  const unchanged = old?.status === status;
  return {
    type,
    status,
    lastUpdateTime: old && unchanged && old.reason === reason ? old.lastUpdateTime : now,
    lastTransitionTime: unchanged ? (old?.lastTransitionTime ?? now) : now,
    reason,
    message,
  };
}

export class DeploymentController {
  constructor(
    private readonly client: ClusterClient,
    private readonly events: EventRecorder,
  ) {}

  replicaSetsOf(deployment: KubeObject): KubeObject[] {
    return this.client.list('replicasets', deployment.metadata?.namespace).filter((rs) => isControlledBy(rs, deployment));
  }

  async sync(namespace: string, name: string): Promise<SyncResult> {
    const deployment = this.client.get({ resource: 'deployments', namespace, name });
    if (!deployment || deployment.metadata?.deletionTimestamp) return;
    let replicaSets = this.replicaSetsOf(deployment);
    let newRs = replicaSets.find((rs) => isDeepStrictEqual(withoutHash(templateOf(rs)), withoutHash(templateOf(deployment))));
    const oldRss = replicaSets.filter((rs) => rs !== newRs);
    if (!newRs) {
      newRs = await this.createReplicaSet(deployment, oldRss);
      replicaSets = [newRs, ...oldRss];
    } else {
      await this.syncRevision(deployment, newRs, oldRss);
    }
    const recreate = rec(specOf(deployment).strategy).type === 'Recreate';
    const changed = recreate ? await this.rolloutRecreate(deployment, newRs, oldRss) : await this.rolloutRolling(deployment, newRs, oldRss);
    if (!changed) await this.cleanup(deployment, oldRss);
    await this.updateStatus(deployment, newRs);
    return undefined;
  }

  private async createReplicaSet(deployment: KubeObject, oldRss: KubeObject[]): Promise<KubeObject> {
    const meta = deployment.metadata ?? {};
    const collisionCount = Number(statusOf(deployment).collisionCount ?? 0);
    const hash = podTemplateHash(templateOf(deployment), collisionCount);
    const template = clone(templateOf(deployment));
    const templateMeta = rec(template.metadata);
    template.metadata = { ...templateMeta, labels: { ...rec(templateMeta.labels), [HASH_LABEL]: hash } };
    const selector = clone(rec(specOf(deployment).selector));
    selector.matchLabels = { ...rec(selector.matchLabels), [HASH_LABEL]: hash };
    const revision = Math.max(0, ...oldRss.map(revisionOf)) + 1;
    const { maxSurge } = fenceposts(deployment);
    const replicas = replicasOf(deployment);
    const body: KubeObject = {
      metadata: {
        name: `${meta.name ?? ''}-${hash}`,
        namespace: meta.namespace,
        labels: { ...rec(templateMeta.labels), [HASH_LABEL]: hash } as Record<string, string>,
        annotations: { [DESIRED]: String(replicas), [MAX]: String(replicas + maxSurge), [REVISION]: String(revision) },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: meta.name ?? '', uid: meta.uid ?? '', controller: true, blockOwnerDeletion: true }],
      },
      spec: { replicas: 0, minReadySeconds: specOf(deployment).minReadySeconds ?? 0, selector, template },
    };
    const created = await this.client.create('replicasets', meta.namespace, body);
    await this.annotateRevision(deployment, revision);
    return created;
  }

  /** A template that matches an old ReplicaSet again (a rollback) makes it the newest revision. */
  private async syncRevision(deployment: KubeObject, newRs: KubeObject, oldRss: KubeObject[]): Promise<void> {
    const highestOld = Math.max(0, ...oldRss.map(revisionOf));
    if (revisionOf(newRs) > highestOld && annotation(deployment, REVISION) === String(revisionOf(newRs))) return;
    const revision = revisionOf(newRs) > highestOld ? revisionOf(newRs) : highestOld + 1;
    if (revision !== revisionOf(newRs)) {
      await this.client.mergePatch(this.ref('replicasets', newRs), { metadata: { annotations: { [REVISION]: String(revision) } } });
    }
    await this.annotateRevision(deployment, revision);
  }

  private async annotateRevision(deployment: KubeObject, revision: number): Promise<void> {
    if (annotation(deployment, REVISION) === String(revision)) return;
    await this.client.mergePatch(this.ref('deployments', deployment), { metadata: { annotations: { [REVISION]: String(revision) } } });
  }

  private ref(resource: string, object: KubeObject): { resource: string; namespace?: string; name: string } {
    return { resource, namespace: object.metadata?.namespace, name: object.metadata?.name ?? '' };
  }

  private async scale(deployment: KubeObject, rs: KubeObject, replicas: number): Promise<boolean> {
    const { maxSurge } = fenceposts(deployment);
    const desired = String(replicasOf(deployment));
    const max = String(replicasOf(deployment) + maxSurge);
    if (rsReplicas(rs) === replicas && annotation(rs, DESIRED) === desired && annotation(rs, MAX) === max) return false;
    const from = rsReplicas(rs);
    await this.client.mergePatch(this.ref('replicasets', rs), { metadata: { annotations: { [DESIRED]: desired, [MAX]: max } }, spec: { replicas } });
    if (from !== replicas) {
      this.events.record(deployment, 'Normal', 'ScalingReplicaSet', `Scaled ${replicas > from ? 'up' : 'down'} replica set ${rs.metadata?.name ?? ''} from ${from} to ${replicas}`);
    }
    return from !== replicas;
  }

  /** reconcileNewReplicaSet, then reconcileOldReplicaSets (rolling.go); true when something scaled. */
  private async rolloutRolling(deployment: KubeObject, newRs: KubeObject, oldRss: KubeObject[]): Promise<boolean> {
    const replicas = replicasOf(deployment);
    const { maxSurge, maxUnavailable } = fenceposts(deployment);
    const all = [newRs, ...oldRss];
    const total = all.reduce((sum, rs) => sum + rsReplicas(rs), 0);
    if (rsReplicas(newRs) > replicas) return this.scale(deployment, newRs, replicas);
    if (rsReplicas(newRs) < replicas) {
      const room = replicas + maxSurge - total;
      if (room > 0) return this.scale(deployment, newRs, rsReplicas(newRs) + Math.min(room, replicas - rsReplicas(newRs)));
    } else if (await this.scale(deployment, newRs, replicas)) return true;

    const oldActive = oldRss.filter((rs) => rsReplicas(rs) > 0);
    if (oldActive.length === 0) return false;
    const minAvailable = replicas - maxUnavailable;
    const newUnavailable = rsReplicas(newRs) - rsStatus(newRs, 'availableReplicas');
    let maxScaledDown = total - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return false;
    let scaledDown = false;
    // cleanupUnhealthyReplicas: old replicas that are not available go first, oldest ReplicaSet first.
    for (const rs of [...oldActive].sort((a, b) => revisionOf(a) - revisionOf(b))) {
      if (maxScaledDown <= 0) break;
      const unhealthy = rsReplicas(rs) - rsStatus(rs, 'availableReplicas');
      if (unhealthy <= 0) continue;
      const down = Math.min(unhealthy, maxScaledDown);
      scaledDown = (await this.scale(deployment, rs, rsReplicas(rs) - down)) || scaledDown;
      maxScaledDown -= down;
      rs.spec = { ...specOf(rs), replicas: rsReplicas(rs) - down };
    }
    // scaleDownOldReplicaSetsForRollingUpdate: only available replicas above minAvailable.
    const available = all.reduce((sum, rs) => sum + rsStatus(rs, 'availableReplicas'), 0);
    let budget = available - minAvailable;
    for (const rs of [...oldActive].sort((a, b) => revisionOf(a) - revisionOf(b))) {
      if (budget <= 0) break;
      if (rsReplicas(rs) === 0) continue;
      const down = Math.min(rsReplicas(rs), budget);
      scaledDown = (await this.scale(deployment, rs, rsReplicas(rs) - down)) || scaledDown;
      budget -= down;
    }
    return scaledDown;
  }

  private async rolloutRecreate(deployment: KubeObject, newRs: KubeObject, oldRss: KubeObject[]): Promise<boolean> {
    let scaled = false;
    for (const rs of oldRss) if (rsReplicas(rs) > 0) scaled = (await this.scale(deployment, rs, 0)) || scaled;
    if (scaled) return true;
    const oldPodsLeft = oldRss.some((rs) => rsStatus(rs, 'replicas') > 0);
    if (oldPodsLeft) return false;
    return this.scale(deployment, newRs, replicasOf(deployment));
  }

  /** Old ReplicaSets scaled to zero beyond revisionHistoryLimit go, oldest first. */
  private async cleanup(deployment: KubeObject, oldRss: KubeObject[]): Promise<void> {
    const limit = Number(specOf(deployment).revisionHistoryLimit ?? 10);
    const idle = oldRss.filter((rs) => rsReplicas(rs) === 0 && rsStatus(rs, 'replicas') === 0).sort((a, b) => revisionOf(a) - revisionOf(b));
    for (const rs of idle.slice(0, Math.max(0, idle.length - limit))) {
      await this.client.delete(this.ref('replicasets', rs), { uid: rs.metadata?.uid }).catch(() => undefined);
    }
  }

  private async updateStatus(deploymentIn: KubeObject, newRsIn: KubeObject): Promise<void> {
    const deployment = this.client.get(this.ref('deployments', deploymentIn));
    if (!deployment) return;
    const all = this.replicaSetsOf(deployment);
    const newRs = all.find((rs) => rs.metadata?.uid === newRsIn.metadata?.uid) ?? newRsIn;
    const replicas = replicasOf(deployment);
    const { maxUnavailable } = fenceposts(deployment);
    const sum = (field: string): number => all.reduce((total, rs) => total + rsStatus(rs, field), 0);
    const available = sum('availableReplicas');
    const updated = rsStatus(newRs, 'replicas');
    const totalSpec = all.reduce((total, rs) => total + rsReplicas(rs), 0);
    const previous = records(statusOf(deployment).conditions);
    const complete = updated === replicas && available === replicas && sum('replicas') === replicas;
    const rsName = newRs.metadata?.name ?? '';
    const conditions = [
      available >= replicas - maxUnavailable
        ? condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', previous)
        : condition('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.', previous),
      complete
        ? condition('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`, previous)
        : condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`, previous),
    ];
    const status: Record<string, unknown> = {
      observedGeneration: deployment.metadata?.generation ?? 1,
      replicas: sum('replicas'),
      updatedReplicas: updated,
      readyReplicas: sum('readyReplicas'),
      availableReplicas: available,
      unavailableReplicas: Math.max(0, totalSpec - available),
      conditions,
    };
    const comparable = (s: Record<string, unknown>): string =>
      JSON.stringify({ ...s, conditions: records(s.conditions).map((c) => [c.type, c.status, c.reason]) });
    if (comparable(statusOf(deployment)) === comparable(status)) return;
    await this.client.mergePatch(this.ref('deployments', deployment), { status }, 'status');
  }
}
