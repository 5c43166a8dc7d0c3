import type { ToolOptions } from '../config/tool-args.js';
import type { Config } from '../config/types.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { DiscoveredResource } from '../kube/discovery.js';
import type { ListedPage, ListTarget } from '../kube/paged-list.js';
import type { SharedAgentKubeConfig } from '../kube/shared-agents.js';
import type { KubeObject, Webhook } from '../admission/types.js';
import { auditText, AuditTally } from './audit-report.js';
import { auditClusterRole, auditTargets, groupWanted } from './audit-targets.js';
import { evaluateEach } from './evaluation.js';
import { count, Progress } from './progress.js';
import { loadToolPolicy, toolPolicyOptions, TOOL_BAD_INPUT, TOOL_FINDINGS, TOOL_OK, ToolInputError, type ToolIo } from './tool-io.js';

const NAMESPACES: ListTarget = { path: '/api/v1/namespaces', apiVersion: 'v1', kind: 'Namespace' };
const CALL_TIMEOUT_MS = 30_000;
const ROLE_HINT = 'kube-admission-server audit --print-cluster-role prints the ClusterRole it needs for this policy';

type KubeModules = [typeof import('../kube/client.js'), typeof import('../kube/paged-list.js'), typeof import('../kube/discovery.js')];

/** The pages of `target`, a listing failure turned into bad input that names the kind and the fix. */
async function* pagesOf(kube: KubeModules, kubeConfig: () => KubeConfig, target: ListTarget, pageSize: number, signal: AbortSignal): AsyncGenerator<ListedPage> {
  const pages = kube[1].listPages(kubeConfig(), target, { pageSize, timeoutMs: CALL_TIMEOUT_MS, signal });
  for (;;) {
    let next: IteratorResult<ListedPage>;
    try {
      next = await pages.next();
    } catch (error) {
      throw new ToolInputError(`cannot list ${target.kind}s: ${(error as Error).message}; ${ROLE_HINT}`);
    }
    if (next.done) return;
    yield next.value;
  }
}

async function discover(kube: KubeModules, kubeConfig: () => KubeConfig, webhooks: readonly Webhook[], signal: AbortSignal): Promise<DiscoveredResource[]> {
  try {
    const resources = await kube[2].discoverResources(kubeConfig(), { timeoutMs: CALL_TIMEOUT_MS, signal, wantGroup: groupWanted(webhooks) });
    return auditTargets(resources, webhooks);
  } catch (error) {
    throw new ToolInputError(`cannot read the API discovery: ${(error as Error).message}`);
  }
}

/**
 * `kube-admission-server audit`: finds every kind the policy's rules match (API discovery), lists
 * each (read only, paged, one page in memory at a time) and reports per namespace what the policy
 * would deny, warn about or audit if each object were created now. Exit 0 when nothing would be
 * denied, 1 when something would, 2 when the policy or the cluster cannot be read.
 */
export async function runAudit(config: Config, tool: ToolOptions, io: ToolIo, signal: AbortSignal = new AbortController().signal): Promise<number> {
  let loaded: SharedAgentKubeConfig | undefined;
  try {
    if (!config.clusterConfigured) throw new ToolInputError('audit needs a cluster: set --kubeconfig (or KUBECONFIG), or run in a pod');
    const { webhooks, excludedNamespaces } = await loadToolPolicy(config.policyFile, toolPolicyOptions(config));
    const kube: KubeModules = await Promise.all([import('../kube/client.js'), import('../kube/paged-list.js'), import('../kube/discovery.js')]);
    // One kubeconfig for the run, read where it was before (a broken one is discovery's error):
    // one per list read the file again and opened a TLS connection of its own each time.
    const kubeConfig = (): KubeConfig => (loaded ??= kube[0].loadKubeConfig(config));
    const targets = await discover(kube, kubeConfig, webhooks, signal);
    if (tool.printClusterRole) {
      io.stdout(auditClusterRole(targets));
      return TOOL_OK;
    }
    const namespaces: KubeObject[] = [];
    for await (const page of pagesOf(kube, kubeConfig, NAMESPACES, tool.pageSize, signal)) namespaces.push(...(page.items as KubeObject[]));
    const tally = new AuditTally();
    const progress = new Progress(io.stderr, 'audit');
    let evaluations = 0;
    const describe = (): string => `${count(tally.objects)} objects, ${count(evaluations)} rule evaluations`;
    for (const target of targets) {
      const resource = { resource: { group: target.group, version: target.version, resource: target.resource }, namespaced: target.namespaced };
      for await (const page of pagesOf(kube, kubeConfig, target, tool.pageSize, signal)) {
        const manifests = (page.items as KubeObject[]).map((object) => ({ object, source: 'cluster' }));
        // Each result tallied and dropped as it comes: kept for the whole page, every request and
        // object of it outlived the young generation and garbage collection cost more.
        await evaluateEach(webhooks, manifests, { excludedNamespaces, defaultNamespace: 'default', namespaces, resource }, (result) => {
          for (const outcome of result.outcome.webhooks) if (outcome.decision !== 'skipped') evaluations++;
          tally.addOne(result);
        });
        progress.update(() => `${describe()}; listing ${target.kind}s`);
      }
    }
    progress.done(describe);
    const report = tally.namespaces();
    const listed = targets.map((t) => t.kind);
    io.stdout(tool.output === 'json' ? `${JSON.stringify({ listed, namespaces: report }, null, 2)}\n` : auditText(report, listed));
    return report.every((ns) => ns.denied === 0) ? TOOL_OK : TOOL_FINDINGS;
  } catch (error) {
    if (!(error instanceof ToolInputError)) throw error;
    io.stderr(`kube-admission-server audit: ${error.message}\n`);
    return TOOL_BAD_INPUT;
  } finally {
    // Its kept-alive connection closed now rather than when the API server times it out.
    loaded?.close();
  }
}
