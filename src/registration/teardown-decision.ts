import type { TeardownPolicy } from '../config/types.js';
import { withTimeout } from '../util/abort.js';
import { formatApiFailure } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { readOwnerChain, type OwnerChain, type PodRef } from './owner-chain.js';

export interface TeardownDecision {
  teardown: boolean;
  why: string;
  /**
   * The Deployment is gone or being deleted: an uninstall, which deletes the RBAC beside it, so a
   * 403 from now on is expected rather than a fault.
   */
  uninstalling?: boolean;
}

export interface TeardownContext extends PodRef {
  api: KubeApi;
  /** False on a developer's machine: there is no pod, so nothing replaces this process. */
  inPod: boolean;
  /** Bounds reading the whole chain; past it the configurations are kept. */
  deadlineMs: number;
  signal: AbortSignal;
}

const GARBAGE_COLLECTED = 'the ClusterRole ownerReference still garbage-collects them on uninstall';

/** The decision `auto` takes from what the owner chain shows: delete only on positive proof. */
export function decideFromOwnerChain(chain: OwnerChain): TeardownDecision {
  switch (chain.kind) {
    case 'pod-absent':
      return { teardown: false, why: `pod ${chain.pod} not found although running in a pod (force-deleted?): nothing proves the install is going away; ${GARBAGE_COLLECTED}` };
    case 'not-a-deployment':
      return { teardown: false, why: `${chain.owner}: only a Deployment deleted or scaled to zero proves the install is going away; ${GARBAGE_COLLECTED}` };
    case 'deployment': {
      const { name, via, deployment } = chain;
      if (!deployment) return { teardown: true, uninstalling: true, why: `Deployment ${name} is gone (found ${via})` };
      if (deployment.metadata?.deletionTimestamp) return { teardown: true, uninstalling: true, why: `Deployment ${name} is being deleted (found ${via})` };
      const replicas = deployment.spec?.replicas ?? 1;
      if (replicas === 0) return { teardown: true, why: `Deployment ${name} is scaled to zero (found ${via})` };
      return { teardown: false, why: `Deployment ${name} wants ${replicas} replicas (found ${via}): a rolling update or scale-down keeps enforcement` };
    }
  }
}

/**
 * Whether shutdown should delete the configurations. `auto` deletes only when the owning
 * Deployment is gone, being deleted or scaled to zero, or when there is no pod at all (a
 * developer's machine). Anything else keeps them, an unreadable chain included: a wrong delete
 * silently drops enforcement, while the ClusterRole ownerReference garbage-collects them on
 * uninstall. Never rejects.
 */
export async function decideTeardown(policy: TeardownPolicy, context: TeardownContext): Promise<TeardownDecision> {
  if (policy === 'always') return { teardown: true, why: '--teardown always' };
  if (policy === 'never') return { teardown: false, why: '--teardown never' };
  if (!context.inPod) return { teardown: true, why: 'not running in a pod (no KUBERNETES_SERVICE_HOST, no POD_NAME): nothing replaces this process' };
  try {
    return decideFromOwnerChain(await withTimeout(context.deadlineMs, context.signal, (signal) => readOwnerChain(context.api, context, signal)));
  } catch (error) {
    return { teardown: false, why: `could not read the owner chain (${formatApiFailure(error)}); keeping the configurations: ${GARBAGE_COLLECTED}` };
  }
}
