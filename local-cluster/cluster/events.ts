/**
 * core/v1 Events, as the controllers and the kubelet record them (what `kubectl describe` and
 * `kubectl get events` show): repeated events are counted on one object, like client-go's
 * event correlator does.
 */
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../fake-apiserver/index.js';
import { kubeTime } from '../fake-apiserver/objects.js';
import type { ClusterClient } from './api-client.js';

export type EventType = 'Normal' | 'Warning';

export class EventRecorder {
  /** involved uid + reason + message -> the Event's name and namespace. */
  readonly #seen = new Map<string, { name: string; namespace: string }>();

  constructor(
    private readonly client: ClusterClient,
    private readonly component: string,
    private readonly onError: (message: string) => void = () => undefined,
  ) {}

  /** Fire and forget: an event that cannot be written is never a reason to fail the work. */
  record(involved: KubeObject, type: EventType, reason: string, message: string): void {
    void this.#write(involved, type, reason, message).catch((error: unknown) => this.onError(`event ${reason}: ${(error as Error).message}`));
  }

  async #write(involved: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const meta = involved.metadata ?? {};
    const namespace = meta.namespace ?? 'default';
    const key = `${meta.uid ?? ''}\0${reason}\0${message}`;
    const now = kubeTime();
    const seen = this.#seen.get(key);
    const existing = seen ? this.client.get({ resource: 'events', namespace: seen.namespace, name: seen.name }) : undefined;
    if (seen && existing) {
      await this.client.mergePatch({ resource: 'events', namespace: seen.namespace, name: seen.name }, { count: Number(existing.count ?? 1) + 1, lastTimestamp: now });
      return;
    }
    const name = `${meta.name ?? 'object'}.${Date.now().toString(16)}${randomBytes(2).toString('hex')}`;
    await this.client.create('events', namespace, {
      metadata: { name, namespace },
      involvedObject: {
        kind: involved.kind,
        namespace: meta.namespace,
        name: meta.name,
        uid: meta.uid,
        apiVersion: involved.apiVersion,
        resourceVersion: meta.resourceVersion,
      },
      reason,
      message,
      source: { component: this.component },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      type,
      reportingComponent: this.component,
      reportingInstance: '',
    });
    this.#seen.set(key, { name, namespace });
  }
}
