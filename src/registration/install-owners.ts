import type { V1OwnerReference } from '@kubernetes/client-node';
import { OWNER_API_VERSION, OWNER_KIND } from './desired-configurations.js';
import type { OwnerClusterRole, OwnerClusterRoleRef } from './owner.js';
import type { OwningDeployment } from './owning-deployment.js';

/** The owners an object of the install names, for the one writer that keeps them. */
export interface OwnerSource {
  /** The owners that existed when last read. */
  current(): readonly V1OwnerReference[];
  /**
   * current(), plus each owner gone since under the uid it had: what an object created now names,
   * so that one re-created in an uninstall's last seconds is collected too.
   */
  forCreate(): readonly V1OwnerReference[];
}

const clusterRoleReference = (owner: OwnerClusterRoleRef): V1OwnerReference | undefined =>
  owner.uid === undefined ? undefined : { apiVersion: OWNER_API_VERSION, kind: OWNER_KIND, name: owner.name, uid: owner.uid };

const defined = (refs: (V1OwnerReference | undefined)[]): V1OwnerReference[] => refs.filter((ref): ref is V1OwnerReference => ref !== undefined);

/**
 * The owners of what the install leaves in its namespace (the generated Secret with the CA key,
 * the Lease): the ClusterRole and the Deployment. The garbage collector deletes an object only
 * once every owner is gone, and drops the references to the gone ones while another remains. So
 * an uninstall (which deletes both) collects them, a GitOps tool force-replacing one of the two
 * (delete, then create) does not, and a rolling update touches neither: a ReplicaSet or a Pod as
 * owner would regenerate the CA at every rollout. The uids are those of the last reconcile pass.
 */
export class InstallOwners implements OwnerSource {
  constructor(
    private readonly clusterRole: OwnerClusterRole | undefined,
    private readonly deployment: OwningDeployment | undefined,
  ) {}

  current(): readonly V1OwnerReference[] {
    return defined([this.clusterRole && clusterRoleReference(this.clusterRole.reference), this.deployment?.reference]);
  }

  forCreate(): readonly V1OwnerReference[] {
    return defined([this.clusterRole && clusterRoleReference(this.clusterRole.lastSeenReference), this.deployment?.lastSeenReference]);
  }
}

const slotOf = (ref: V1OwnerReference): string => `${ref.apiVersion.split('/')[0]}/${ref.kind}/${ref.name}`;

/** `existing` with each of `own` in place of the reference to the same owner (kind and name); others kept. */
export function withOwners(existing: readonly V1OwnerReference[] | undefined, own: readonly V1OwnerReference[]): V1OwnerReference[] {
  const slots = new Set(own.map(slotOf));
  return [...(existing ?? []).filter((ref) => !slots.has(slotOf(ref))), ...own];
}

/** Whether `existing` names every one of `own` with its uid. */
export function namesEvery(existing: readonly V1OwnerReference[] | undefined, own: readonly V1OwnerReference[]): boolean {
  return own.every((ref) => (existing ?? []).some((e) => slotOf(e) === slotOf(ref) && e.uid === ref.uid));
}

/** A key for a set of references, to tell when they changed. */
export const ownersKey = (refs: readonly V1OwnerReference[]): string => JSON.stringify(refs.map((r) => `${slotOf(r)}/${r.uid}`).sort());
