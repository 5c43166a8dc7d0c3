/**
 * kube-controller-manager's ValidatingAdmissionPolicy status controller
 * (pkg/controller/validatingadmissionpolicystatus): for a policy whose metadata.generation is
 * ahead of status.observedGeneration it type-checks the expressions and writes
 * status.observedGeneration and status.typeChecking.expressionWarnings through the status
 * subresource. It writes no conditions. The double does not type-check against the matched
 * kinds' schemas (kube-apiserver's TypeChecker): its typeChecking carries no warnings.
 */
import type { KubeObject } from '../fake-apiserver/index.js';
import type { ClusterClient } from './api-client.js';
import type { SyncResult } from './work-queue.js';

const RESOURCE = 'validatingadmissionpolicies';

function observedGeneration(policy: KubeObject): number {
  const status = policy.status as { observedGeneration?: unknown } | undefined;
  return typeof status?.observedGeneration === 'number' ? status.observedGeneration : 0;
}

export class PolicyStatusController {
  constructor(private readonly client: ClusterClient) {}

  async sync(name: string): Promise<SyncResult> {
    const policy = this.client.get({ resource: RESOURCE, name });
    if (!policy) return;
    const generation = policy.metadata?.generation ?? 0;
    if (generation <= observedGeneration(policy)) return;
    await this.client.mergePatch({ resource: RESOURCE, name }, { status: { observedGeneration: generation, typeChecking: { expressionWarnings: null } } }, 'status');
  }
}
