/**
 * The background audit against the double: the report CRDs the repository ships, stored reports
 * read and indexed, write requests on reports counted, a policy with violations to find.
 */
import { parse } from 'yaml';
import type { FakeApiServer, KubeObject, RbacPolicy } from '../../../local-cluster/fake-apiserver/index.js';
import { repositoryRoot } from '../../../local-cluster/util/repository-root.js';
import { renderChart } from '../manifests/installs.js';
import { boundRoles } from '../manifests/rbac.js';
import { NAMESPACE } from './cluster-harness.js';
import { REPORT_CRDS, shippedCrd } from './custom-resources.js';
import { storeCondition } from '../cluster/store-condition.js';

export interface ReportResult {
  policy: string;
  result: string;
  message?: string;
  resources: { apiVersion: string; kind: string; name: string; namespace?: string; uid: string }[];
}

export interface StoredReport extends KubeObject {
  summary: Record<string, number>;
  results: ReportResult[];
}

/** kubectl apply -f of the shipped OpenReports CRDs (and the wgpolicyk8s ones when asked). */
export async function installReportCrds(api: FakeApiServer, wgpolicyk8s = false): Promise<void> {
  const files = wgpolicyk8s ? [REPORT_CRDS.policyReports, REPORT_CRDS.clusterPolicyReports] : [REPORT_CRDS.reports, REPORT_CRDS.clusterReports];
  for (const file of files) api.store.put('customresourcedefinitions', await shippedCrd(file));
}

/** The store's names of the report kinds (`<plural>.<group>`, as it keeps custom resources). */
export const REPORTS = 'reports.openreports.io';
export const CLUSTER_REPORTS = 'clusterreports.openreports.io';
export const POLICY_REPORTS = 'policyreports.wgpolicyk8s.io';

/** Every stored Report (or PolicyReport) of `namespace`. */
export function storedReports(api: FakeApiServer, namespace: string, resource = REPORTS): StoredReport[] {
  return api.store.list(resource, namespace) as StoredReport[];
}

/** The result of `rule` for the object `name` of `kind` across the namespace's reports, if any. */
export function resultFor(api: FakeApiServer, namespace: string, kind: string, name: string, rule: string, resource = REPORTS): ReportResult | undefined {
  for (const report of storedReports(api, namespace, resource)) {
    const found = (report.results ?? []).find((r) => r.policy === rule && r.resources[0]?.kind === kind && r.resources[0]?.name === name);
    if (found) return found;
  }
  return undefined;
}

/** Resolves once `check` holds of the stored reports (re-checked at every store change). */
export function reportsHold(api: FakeApiServer, what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  return storeCondition(api.store, what, check, timeoutMs);
}

/** The write requests (create, update, patch, delete) on report kinds answered so far. */
export function reportWrites(api: FakeApiServer): number {
  return api.requests.filter((r) => (r.resource === 'reports' || r.resource === 'clusterreports' || r.resource === 'policyreports' || r.resource === 'clusterpolicyreports') && r.verb !== undefined && ['create', 'update', 'patch', 'delete'].includes(r.verb)).length;
}

/** A privileged Deployment (deny-privileged finds it) or, fixed, the same without privilege. */
export function deployment(name: string, namespace: string, privileged: boolean): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', securityContext: { privileged } }] } },
    },
  };
}

export const REPORTS_POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
excludedNamespaces: [kube-system]
webhooks:
  - name: require-app-label
    kind: requireLabels
    mode: warn
    params:
      labels: [{ key: app }]
  - name: deny-privileged
    kind: denyPrivileged
    mode: enforce
    severity: high
    category: Pod Security
`;

/** The RBAC the Helm chart grants for this policy with the background audit on (its Roles moved to the harness's namespace). */
export async function chartRbacWithReports(policy: string, reports: Record<string, unknown> = {}): Promise<RbacPolicy> {
  const bound = boundRoles(await renderChart(repositoryRoot(), { policy: parse(policy) as unknown, reports: { enabled: true, ...reports } }), { namespace: 'kube-admission-server', name: 'kube-admission-server' });
  return { ...bound, roles: bound.roles.map((role) => ({ ...role, metadata: { ...role.metadata, namespace: NAMESPACE } })) };
}

/** The value of `series` on a replica's /metrics (name and labels as exposed), or undefined. */
export async function metricValue(healthPort: number, series: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
