import { stringify } from 'yaml';
import type { ToolOptions } from '../config/tool-args.js';
import type { Config } from '../config/types.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { DiscoveredResource } from '../kube/discovery.js';
import type { ListedPage, ListTarget } from '../kube/paged-list.js';
import type { SharedAgentKubeConfig } from '../kube/shared-agents.js';
import { namespaceObjectOf } from '../admission/namespace-object.js';
import type { KubeObject, Webhook } from '../admission/types.js';
import { StoredObjectEvaluation } from '../kube/evaluation/evaluate-objects.js';
import { auditObject, keptKindOf, kindOf, type AuditInputs } from '../reports/audit-results.js';
import { KeptObjects, RuleTable } from '../reports/kept-objects.js';
import { REPORT_APIS } from '../reports/report-api.js';
import { reportsOf, type ReportOwner } from '../reports/report-objects.js';
import { reportedRules, reportedWebhooks } from '../reports/reported-rules.js';
import { auditTargets, groupWanted } from '../reports/targets.js';
import { runAsCalled } from '../server/run-as-called.js';
import { auditText, AuditTally } from './audit-report.js';
import { auditClusterRole } from './audit-cluster-role.js';
import { count, Progress } from './progress.js';
import { loadToolPolicy, toolPolicyOptions, TOOL_BAD_INPUT, TOOL_FINDINGS, TOOL_OK, ToolInputError, type LoadedToolPolicy, type ToolIo } from './tool-io.js';
import { BadInputError } from '../util/bad-input.js';

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

/** The install's owner as the server names it in its reports (`--owner-cluster-role`), read from the cluster. */
async function ownerOf(config: Config, kubeConfig: () => KubeConfig, signal: AbortSignal): Promise<ReportOwner | undefined> {
  if (!config.ownerClusterRole) return undefined;
  const { getJson } = await import('../kube/paged-list.js');
  try {
    const role = await getJson<KubeObject>(kubeConfig(), `/apis/rbac.authorization.k8s.io/v1/clusterroles/${config.ownerClusterRole}`, CALL_TIMEOUT_MS, signal);
    return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: config.ownerClusterRole, uid: role.metadata?.uid ?? '' };
  } catch (error) {
    throw new ToolInputError(`cannot read the owner ClusterRole ${config.ownerClusterRole}: ${(error as Error).message}`);
  }
}

/** The report objects the server would write for what was kept, as a YAML stream in the order the server keeps them. */
function reportYaml(config: Config, inputs: AuditInputs, owner: ReportOwner | undefined): string {
  const shape = { api: REPORT_APIS[config.reportsApi], install: config.configName, maxBytes: config.reportsMaxBytes, rules: inputs.rules, reported: inputs.reported, ...(owner ? { owner } : {}) };
  const documents: string[] = [];
  for (const namespace of [...inputs.kept.namespaces()].sort()) {
    const { reports, oversized } = reportsOf(namespace, inputs.kept.objectsIn(namespace), shape);
    for (const { object, bytes } of oversized) {
      documents.push(`# ${object.kind.kind} ${namespace ? `${namespace}/` : ''}${object.name}: its results alone (${bytes} bytes) exceed --reports-max-bytes; left out, as the server leaves it out\n`);
    }
    for (const report of reports) documents.push(stringify(JSON.parse(report.json), { aliasDuplicateObjects: false }));
  }
  return documents.join('---\n');
}

interface Run {
  config: Config;
  tool: ToolOptions;
  io: ToolIo;
  signal: AbortSignal;
  kube: KubeModules;
  kubeConfig: () => KubeConfig;
  policy: LoadedToolPolicy;
}

/**
 * Lists every target page by page, each object through the one evaluation path (the background
 * audit's), its outcome tallied and, for `-o report`, its results kept.
 */
async function auditAll(run: Run, targets: readonly DiscoveredResource[], tally: AuditTally, reported: AuditInputs['reported']): Promise<AuditInputs> {
  const { kube, kubeConfig, tool, signal, io } = run;
  const namespaces = new Map<string, KubeObject>();
  for await (const page of pagesOf(kube, kubeConfig, NAMESPACES, tool.pageSize, signal)) {
    for (const namespace of page.items as KubeObject[]) if (namespace.metadata?.name) namespaces.set(namespace.metadata.name, namespaceObjectOf(namespace));
  }
  const evaluation = new StoredObjectEvaluation(run.policy.webhooks, { run: runAsCalled, excludedNamespaces: run.policy.excludedNamespaces, namespaces: { get: (name) => namespaces.get(name) } });
  const inputs: AuditInputs = { evaluation, reported, rules: new RuleTable(), kept: new KeptObjects() };
  const keep = tool.output === 'report';
  const progress = new Progress(io.stderr, 'audit');
  let evaluations = 0;
  const describe = (): string => `${count(tally.objects)} objects, ${count(evaluations)} rule evaluations`;
  for (const target of targets) {
    const kind = keptKindOf(target);
    for await (const page of pagesOf(kube, kubeConfig, target, tool.pageSize, signal)) {
      // Each result tallied and dropped as it comes: only the tallies and the kept results stay.
      for (const object of page.items as KubeObject[]) {
        const outcome = keep ? (await auditObject(inputs, target, kind, object))?.outcome : await evaluation.evaluate(object, kindOf(target));
        if (!outcome) continue;
        for (const webhook of outcome.webhooks) if (webhook.decision !== 'skipped') evaluations++;
        tally.addOne({ manifest: { object, source: 'cluster' }, outcome });
      }
      progress.update(() => `${describe()}; listing ${target.kind}s`);
    }
  }
  progress.done(describe);
  return inputs;
}

/**
 * `kube-admission-server audit`: finds every kind the policy's rules match (API discovery), lists
 * each (read only, paged, one page in memory at a time) and reports per namespace what the policy
 * would deny, warn about or audit if each object were created now; with `-o report`, the report
 * objects the server's background audit would write for the same objects. Exit 0 when nothing
 * would be denied, 1 when something would, 2 when the policy or the cluster cannot be read.
 */
export async function runAudit(config: Config, tool: ToolOptions, io: ToolIo, signal: AbortSignal = new AbortController().signal): Promise<number> {
  let loaded: SharedAgentKubeConfig | undefined;
  try {
    if (!config.clusterConfigured) throw new ToolInputError('audit needs a cluster: set --kubeconfig (or KUBECONFIG), or run in a pod');
    const policy = await loadToolPolicy(config.policyFile, toolPolicyOptions(config));
    const kube: KubeModules = await Promise.all([import('../kube/client.js'), import('../kube/paged-list.js'), import('../kube/discovery.js')]);
    // One kubeconfig for the run, read where it was before (a broken one is discovery's error):
    // one per list read the file again and opened a TLS connection of its own each time.
    const kubeConfig = (): KubeConfig => (loaded ??= kube[0].loadKubeConfig(config));
    const reported = reportedRules(policy.policy.entries, policy.webhooks);
    // Reports list what the reported rules match, as the server does; the text and JSON what any rule matches.
    const targets = await discover(kube, kubeConfig, tool.output === 'report' ? reportedWebhooks(policy.webhooks, reported) : policy.webhooks, signal);
    if (tool.printClusterRole) {
      io.stdout(auditClusterRole(targets));
      return TOOL_OK;
    }
    const owner = tool.output === 'report' ? await ownerOf(config, kubeConfig, signal) : undefined;
    const tally = new AuditTally();
    const inputs = await auditAll({ config, tool, io, signal, kube, kubeConfig, policy }, targets, tally, reported);
    const report = tally.namespaces();
    const listed = targets.map((t) => t.kind);
    if (tool.output === 'report') io.stdout(reportYaml(config, inputs, owner));
    else io.stdout(tool.output === 'json' ? `${JSON.stringify({ listed, namespaces: report }, null, 2)}\n` : auditText(report, listed));
    return report.every((ns) => ns.denied === 0) ? TOOL_OK : TOOL_FINDINGS;
  } catch (error) {
    if (!(error instanceof BadInputError)) throw error;
    io.stderr(`kube-admission-server audit: ${error.message}\n`);
    return TOOL_BAD_INPUT;
  } finally {
    // Its kept-alive connection closed now rather than when the API server times it out.
    loaded?.close();
  }
}
