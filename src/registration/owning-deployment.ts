import type { V1OwnerReference } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { formatApiFailure, readOrUndefined } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { readOwnerChain, type PodRef } from './owner-chain.js';
import { callApi } from '../kube/request-deadline.js';

/** A Deployment's ownerReference; no blockOwnerDeletion, which would need delete rights on the Deployment. */
const deploymentReference = (name: string, uid: string): V1OwnerReference => ({ apiVersion: 'apps/v1', kind: 'Deployment', name, uid });

/**
 * The Deployment that runs this pod, as an owner of what the install leaves in its namespace. It
 * is found once through the owner chain Pod -> ReplicaSet -> Deployment, then read by name at
 * every refresh: a GitOps tool that force-replaces it (a changed selector is immutable) gives it a
 * new uid. A pod that no Deployment owns (StatefulSet, Argo Rollout, a bare pod) has none, for
 * good; a read that fails keeps what the last one showed.
 */
export class OwningDeployment {
  readonly #api: KubeApi;
  readonly #pod: PodRef;
  readonly #logger: Logger;
  /** undefined until the chain was read; null when no Deployment owns the pod. */
  #name: string | null | undefined;
  #uid: string | undefined;
  #lastSeenUid: string | undefined;

  constructor(api: KubeApi, pod: PodRef, logger: Logger) {
    this.#api = api;
    this.#pod = pod;
    this.#logger = logger;
  }

  /** The Deployment as last read; undefined when none owns the pod or it was gone. */
  get reference(): V1OwnerReference | undefined {
    return this.#name && this.#uid ? deploymentReference(this.#name, this.#uid) : undefined;
  }

  /** Like `reference`, but a Deployment gone since names the uid it had when last seen. */
  get lastSeenReference(): V1OwnerReference | undefined {
    return this.#name && this.#lastSeenUid ? deploymentReference(this.#name, this.#lastSeenUid) : undefined;
  }

  /** One read (the whole chain the first time); never rejects unless `signal` aborts. */
  async refresh(signal: AbortSignal): Promise<void> {
    if (this.#name === null) return;
    try {
      this.#update(this.#name === undefined ? await this.#find(signal) : await this.#read(this.#name, signal));
    } catch (error) {
      if (signal.aborted) throw error;
      this.#logger.warn({ error: formatApiFailure(error) }, 'reading the owning Deployment failed; keeping the ownerReference last seen');
    }
  }

  async #find(signal: AbortSignal): Promise<string | undefined> {
    const chain = await readOwnerChain(this.#api, this.#pod, signal);
    if (chain.kind === 'pod-absent') throw new Error(`pod ${chain.pod} not found`);
    if (chain.kind === 'not-a-deployment') {
      this.#name = null;
      this.#logger.info({ owner: chain.owner }, 'no Deployment runs this pod: the ClusterRole alone owns the generated Secret and the Lease');
      return undefined;
    }
    this.#name = chain.name;
    return chain.deployment?.metadata?.uid;
  }

  async #read(name: string, signal: AbortSignal): Promise<string | undefined> {
    const deployment = await readOrUndefined(() => callApi(signal, (o) => this.#api.apps.readNamespacedDeployment({ name, namespace: this.#pod.namespace }, o)));
    return deployment?.metadata?.uid;
  }

  #update(uid: string | undefined): void {
    if (this.#name && uid !== this.#uid && this.#lastSeenUid !== undefined) {
      this.#logger.info({ deployment: this.#name, previousUid: this.#lastSeenUid, uid: uid ?? null }, uid ? 'the owning Deployment was replaced: the ownerReference follows its uid' : 'the owning Deployment is gone');
    }
    this.#uid = uid;
    this.#lastSeenUid = uid ?? this.#lastSeenUid;
  }
}
