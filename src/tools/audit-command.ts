import type { ToolOptions } from '../config/tool-args.js';
import type { Config } from '../config/types.js';
import type { ListTarget } from '../kube/paged-list.js';
import type { AdmissionRequest, KubeObject, Webhook } from '../policy/types.js';
import { ruleMatches } from '../policy/webhook-match.js';
import { auditByNamespace, auditText } from './audit-report.js';
import { evaluateObjects } from './evaluate-objects.js';
import { loadToolPolicy, TOOL_BAD_INPUT, TOOL_FINDINGS, TOOL_OK, ToolInputError, type ToolIo } from './tool-io.js';

/** What already runs: Pods and every kind that carries a pod template. */
export const AUDITED_KINDS: readonly ListTarget[] = [
  { path: '/api/v1/pods', apiVersion: 'v1', kind: 'Pod' },
  { path: '/api/v1/replicationcontrollers', apiVersion: 'v1', kind: 'ReplicationController' },
  { path: '/apis/apps/v1/deployments', apiVersion: 'apps/v1', kind: 'Deployment' },
  { path: '/apis/apps/v1/statefulsets', apiVersion: 'apps/v1', kind: 'StatefulSet' },
  { path: '/apis/apps/v1/daemonsets', apiVersion: 'apps/v1', kind: 'DaemonSet' },
  { path: '/apis/apps/v1/replicasets', apiVersion: 'apps/v1', kind: 'ReplicaSet' },
  { path: '/apis/batch/v1/jobs', apiVersion: 'batch/v1', kind: 'Job' },
  { path: '/apis/batch/v1/cronjobs', apiVersion: 'batch/v1', kind: 'CronJob' },
];
const NAMESPACES: ListTarget = { path: '/api/v1/namespaces', apiVersion: 'v1', kind: 'Namespace' };
const PAGE_TIMEOUT_MS = 30_000;

/** The kinds some webhook's rules match on CREATE: only those are listed. */
export function kindsToAudit(webhooks: readonly Webhook[]): ListTarget[] {
  return AUDITED_KINDS.filter((target) => {
    const [group, version] = target.apiVersion.includes('/') ? target.apiVersion.split('/') : ['', target.apiVersion];
    const resource = target.path.slice(target.path.lastIndexOf('/') + 1);
    const probe = { operation: 'CREATE', namespace: 'audit', resource: { group, version, resource } } as AdmissionRequest;
    return webhooks.some((w) => w.rules.some((rule) => ruleMatches(rule, probe)));
  });
}

/**
 * `kube-admission-server audit`: lists (read only, paged) what the cluster runs and reports per
 * namespace what the policy would deny, warn about or audit if each object were created now.
 * Exit 0 when nothing would be denied, 1 when something would, 2 when the policy or the cluster
 * cannot be read.
 */
export async function runAudit(config: Config, tool: ToolOptions, io: ToolIo, signal: AbortSignal = new AbortController().signal): Promise<number> {
  try {
    if (!config.clusterConfigured) throw new ToolInputError('audit needs a cluster: set --kubeconfig (or KUBECONFIG), or run in a pod');
    const { webhooks, excludedNamespaces } = await loadToolPolicy(config.policyFile, config.namespace);
    const [{ loadKubeConfig }, { listAll }] = await Promise.all([import('../kube/client.js'), import('../kube/paged-list.js')]);
    const kubeConfig = loadKubeConfig(config);
    const list = async (target: ListTarget) => {
      try {
        return (await listAll(kubeConfig, target, { pageSize: tool.pageSize, timeoutMs: PAGE_TIMEOUT_MS, signal })) as KubeObject[];
      } catch (error) {
        throw new ToolInputError(`cannot list ${target.kind}s: ${(error as Error).message}`);
      }
    };
    const targets = kindsToAudit(webhooks);
    const namespaces = await list(NAMESPACES);
    const objects: KubeObject[] = [];
    for (const target of targets) objects.push(...(await list(target)));
    const manifests = objects.map((object) => ({ object, source: 'cluster' }));
    const results = await evaluateObjects(webhooks, manifests, { excludedNamespaces, defaultNamespace: 'default', namespaces });
    const report = auditByNamespace(results);
    io.stdout(tool.output === 'json' ? `${JSON.stringify({ listed: targets.map((t) => t.kind), namespaces: report }, null, 2)}\n` : auditText(report, targets.map((t) => t.kind)));
    return results.every((r) => r.outcome.allowed) ? TOOL_OK : TOOL_FINDINGS;
  } catch (error) {
    if (!(error instanceof ToolInputError)) throw error;
    io.stderr(`kube-admission-server audit: ${error.message}\n`);
    return TOOL_BAD_INPUT;
  }
}
