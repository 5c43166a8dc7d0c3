/** Which API the reports are written as: OpenReports, or the wgpolicyk8s group older tools read. */
export type ReportApiName = 'openreports' | 'wgpolicyk8s';

export const REPORT_API_NAMES: readonly ReportApiName[] = ['openreports', 'wgpolicyk8s'];

/** One report API: its group version and the kinds and resources of its namespaced and cluster reports. */
export interface ReportApi {
  name: ReportApiName;
  group: string;
  version: string;
  apiVersion: string;
  namespaced: { kind: string; resource: string };
  cluster: { kind: string; resource: string };
  /** OpenReports names the source once per report; wgpolicyk8s v1alpha2 on each result. */
  sourcePerResult: boolean;
}

export const REPORT_APIS: Readonly<Record<ReportApiName, ReportApi>> = {
  openreports: {
    name: 'openreports',
    group: 'openreports.io',
    version: 'v1alpha1',
    apiVersion: 'openreports.io/v1alpha1',
    namespaced: { kind: 'Report', resource: 'reports' },
    cluster: { kind: 'ClusterReport', resource: 'clusterreports' },
    sourcePerResult: false,
  },
  wgpolicyk8s: {
    name: 'wgpolicyk8s',
    group: 'wgpolicyk8s.io',
    version: 'v1alpha2',
    apiVersion: 'wgpolicyk8s.io/v1alpha2',
    namespaced: { kind: 'PolicyReport', resource: 'policyreports' },
    cluster: { kind: 'ClusterPolicyReport', resource: 'clusterpolicyreports' },
    sourcePerResult: true,
  },
};

/** The collection path of the reports of `namespace` ('' for the cluster-scoped ones). */
export function reportsPath(api: ReportApi, namespace: string): string {
  return namespace ? `/apis/${api.apiVersion}/namespaces/${namespace}/${api.namespaced.resource}` : `/apis/${api.apiVersion}/${api.cluster.resource}`;
}
