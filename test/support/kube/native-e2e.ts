/**
 * What the native-policy end-to-end tests share: the RBAC the Helm chart grants for a policy, in
 * the API double's shape, and one metric's value from a replica's /metrics.
 */
import { parse } from 'yaml';
import type { RbacPolicy } from '../../../local-cluster/fake-apiserver/index.js';
import { repositoryRoot } from '../../../local-cluster/util/repository-root.js';
import { renderChart } from '../manifests/installs.js';
import { boundRoles } from '../manifests/rbac.js';
import { NAMESPACE } from './cluster-harness.js';

/** The RBAC the Helm chart grants for this policy (its Roles moved to the harness's namespace). */
export async function chartRbac(policy: string): Promise<RbacPolicy> {
  const bound = boundRoles(await renderChart(repositoryRoot(), { policy: parse(policy) as unknown }), { namespace: 'kube-admission-server', name: 'kube-admission-server' });
  return { ...bound, roles: bound.roles.map((role) => ({ ...role, metadata: { ...role.metadata, namespace: NAMESPACE } })) };
}

/** The value of `series` (name and labels as exposed), or undefined when it is not exposed. */
export async function metric(healthPort: number, series: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
