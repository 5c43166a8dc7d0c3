/** The RBAC the base manifests ship, bound in another namespace, in the API test double's shape. */
import { join } from 'node:path';
import { repositoryRoot } from '../../../local-cluster/util/repository-root.js';
import type { RbacPolicy } from '../../../local-cluster/fake-apiserver/index.js';
import { renderedRbacRoles } from './rbac.js';

/** The base manifests' Roles and ClusterRoles for the server's ServiceAccount, with the Roles moved to `namespace`. */
export async function shippedRbac(namespace: string): Promise<RbacPolicy> {
  const bound = await renderedRbacRoles(join(repositoryRoot(), 'manifests', 'base'));
  return { ...bound, roles: bound.roles.map((role) => ({ ...role, metadata: { ...role.metadata, namespace } })) };
}
