/**
 * The namespace controller: a Namespace being deleted (phase Terminating) has every object in it
 * deleted through the API (Pods gracefully, so their processes get SIGTERM first), and once
 * nothing is left its `kubernetes` finalizer is removed through the finalize subresource, which
 * lets the apiserver remove the Namespace.
 */
import type { KubeObject } from '../fake-apiserver/index.js';
import { clone } from '../fake-apiserver/objects.js';
import { isNotFound, type ClusterClient } from './api-client.js';
import type { SyncResult } from './work-queue.js';

const POLL_MS = 250;
/**
 * namespace_controller.go's namespaceDeletionGracePeriod: a namespace event is processed after
 * 5 s, for admission caches to catch up; it is also why `kubectl delete -k` gets to delete the
 * namespace's objects itself instead of finding them gone.
 */
export const NAMESPACE_DELETION_GRACE_MS = 5000;

export class NamespaceController {
  constructor(private readonly client: ClusterClient) {}

  private contents(namespace: string): { resource: string; object: KubeObject }[] {
    const found: { resource: string; object: KubeObject }[] = [];
    for (const type of this.client.types().filter((t) => t.namespaced)) {
      for (const object of this.client.list(type.key, namespace)) found.push({ resource: type.key, object });
    }
    return found;
  }

  async sync(name: string): Promise<SyncResult> {
    const namespace = this.client.get({ resource: 'namespaces', name });
    if (!namespace?.metadata?.deletionTimestamp) return;
    const left = this.contents(name);
    for (const { resource, object } of left) {
      if (object.metadata?.deletionTimestamp) continue;
      await this.client
        .delete({ resource, namespace: name, name: object.metadata?.name ?? '' }, { propagationPolicy: 'Background', uid: object.metadata?.uid })
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
    }
    if (this.contents(name).length > 0) return { requeueAfterMs: POLL_MS };
    const finalized = clone(namespace);
    finalized.spec = { ...((namespace.spec ?? {}) as Record<string, unknown>), finalizers: [] };
    await this.client.update({ resource: 'namespaces', name }, finalized, 'finalize').catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
    return undefined;
  }
}
