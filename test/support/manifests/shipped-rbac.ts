/** The RBAC the base manifests ship, bound in another namespace, in the API test double's shape. */
import { join } from 'node:path';
import { repositoryRoot } from '../../../local-cluster/util/repository-root.js';
import type { RbacPolicy } from '../../../local-cluster/fake-apiserver/index.js';
import { renderWithComponents } from './components.js';
import { boundRoles, renderedRbacRoles } from './rbac.js';

/**
 * The base manifests' Roles and ClusterRoles for the server's ServiceAccount (with `components`
 * from manifests/components applied), the Roles moved to `namespace`.
 */
export async function shippedRbac(namespace: string, components: readonly string[] = []): Promise<RbacPolicy> {
  const bound =
    components.length === 0
      ? await renderedRbacRoles(join(repositoryRoot(), 'manifests', 'base'))
      : boundRoles(await renderWithComponents(repositoryRoot(), components), { namespace: 'kube-admission-server', name: 'kube-admission-server' });
  return { ...bound, roles: bound.roles.map((role) => ({ ...role, metadata: { ...role.metadata, namespace } })) };
}
