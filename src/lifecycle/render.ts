import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { stringify } from 'yaml';
import type { Config } from '../config/types.js';
import { desiredConfigurations } from '../registration/desired-configurations.js';
import { GRANTED_FOR, handlerRbacObjects } from '../registration/handler-rbac.js';
import { registeredWebhooks } from '../webhooks/grouping.js';
import type { KubeObject, Webhook } from '../admission/types.js';
import { GeneratedMaterialSource } from '../tls/generated-source.js';
import { createTlsMetrics } from '../tls/metrics.js';
import { connectToCluster } from './cluster-connection.js';
import { readServerVersion } from '../kube/server-version.js';
import { matchConditionsRefusedBy } from '../cel/match-conditions.js';
import { authorizerAskers, AUTHORIZER_GRANT } from './authorization.js';
import { PolicyFileError } from '../policy/policy-file.js';
import { loadPolicyOrThrow } from './policy-reloader.js';
import { createTlsSource } from './tls-source.js';
import { nativePolicyName, nativePolicyObjects } from '../registration/native-policy-objects.js';
import { nativeRbacObjects } from '../registration/native-rbac.js';
import { nativeObjectApis } from '../registration/native-policy-api.js';
import { describeTypeCheck } from '../registration/native-policy-status.js';
import type { ClusterConnection } from './cluster-connection.js';
import { nativeSupportOfVersion, readNativeSupport } from '../registration/native-support.js';
import { decideEngines, servedPolicyWebhooks, type EngineDecisions } from '../policy/engine.js';
import { CURRENT_KUBERNETES_RELEASE, formatKubernetesVersion } from '../util/kubernetes-version.js';
import type { Policy } from '../policy/policy.js';

/** Why a caBundle rendered from material made in memory matches no server. */
const THROWAWAY_CA =
  'no cluster and no --cert-dir, and no usable CA in ./certs: the caBundle is of a CA made for this render and kept nowhere, so no server serves under it; ' +
  'give --kubeconfig (the CA in the cluster\'s Secret), --cert-dir DIR (kept there for a server run with the same directory), or --tls-mode files with the CA you mount';

/**
 * The two configurations this server would register, with caBundle, as one YAML stream: for
 * review and GitOps, grouped as the policy's `grouping` says; then the RBAC that custom handlers declared. Loads (or generates and
 * persists) the TLS material the server would use: with a cluster, the CA in its Secret; without,
 * --cert-dir when given, else ./certs read only (new material stays in memory: a command that
 * prints leaves no key material behind). matchConditions are compiled for --kubernetes-version,
 * else the cluster's, else the current release.
 */
export async function renderConfigurations(
  config: Config,
  logger: Logger,
  signal: AbortSignal,
  customWebhooks: readonly Webhook[] = [],
  serviceAccount = 'kube-admission-server',
): Promise<string> {
  const cluster = await connectToCluster(config);
  try {
    return await renderWith(cluster, config, logger, signal, customWebhooks, serviceAccount);
  } finally {
    // Its kept-alive API connections are unref'd; closing them is tidy, not needed for exit.
    cluster?.close();
  }
}

async function renderWith(
  cluster: ClusterConnection | undefined,
  config: Config,
  logger: Logger,
  signal: AbortSignal,
  customWebhooks: readonly Webhook[],
  serviceAccount: string,
): Promise<string> {
  const kubernetesVersion = config.kubernetesVersion ?? (cluster ? await readServerVersion(cluster.api, signal, logger) : undefined);
  const { policy, webhooks } = await loadPolicyOrThrow(config.policyFile, { ownNamespace: config.namespace, ...(kubernetesVersion ? { kubernetesVersion } : {}) });
  const refused = kubernetesVersion ? matchConditionsRefusedBy(kubernetesVersion, customWebhooks) : [];
  if (refused.length > 0) throw new PolicyFileError(refused);
  const askers = authorizerAskers(webhooks);
  // Decided here as the server decides it at load: the install must carry the grant.
  if (askers.length > 0) logger.warn({ webhooks: askers }, `these webhooks ask the authorizer: ${AUTHORIZER_GRANT}`);
  const tls = createTlsSource(config, cluster, logger, createTlsMetrics(new Registry()));
  const material = await tls.load(signal);
  await tls.stop();
  if (tls instanceof GeneratedMaterialSource && tls.keptNowhere) logger.warn({ certDir: config.certDir }, THROWAWAY_CA);
  const engines = await decideRenderedEngines(policy, cluster ? () => readNativeSupport(cluster.api.kubeConfig, signal) : undefined, config.kubernetesVersion ?? kubernetesVersion);
  if (engines.refused.length > 0) {
    throw new PolicyFileError(engines.refused.map((r) => `entry ${r.entry}: engine: native cannot run on this cluster: ${r.why}; use engine: auto to fall back to the webhook, or engine: webhook`));
  }
  for (const { entry, why } of engines.fellBack) logger.info({ entry, why }, 'engine auto: the webhook runs this entry');
  const nativeNames = new Set(engines.native.map((e) => e.spec.name));
  const webhookEntries = servedPolicyWebhooks(policy, webhooks).filter((w) => !nativeNames.has(w.name));
  const owner =
    cluster && config.ownerClusterRole
      ? await new (await import('../registration/owner.js')).OwnerClusterRole(cluster.api, config.ownerClusterRole, logger).readAtStart(signal)
      : undefined;
  const desired = desiredConfigurations({
    configName: config.configName,
    serviceName: config.serviceName,
    namespace: config.namespace,
    caBundlePem: material.caBundlePem,
    webhooks: registeredWebhooks([...webhookEntries, ...customWebhooks], policy.grouping),
    excludedNamespaces: policy.excludedNamespaces,
    // A ClusterRole that does not exist (warned about) is left out rather than rendered as an empty list.
    ...(owner?.uid ? { owner } : {}),
  });
  // The RBAC custom handlers declared for their own API calls, bound to the server's ServiceAccount.
  const rbac = handlerRbacObjects(customWebhooks, { name: config.configName, namespace: config.namespace, serviceAccount });
  const native = engines.native.flatMap((entry) => {
    const objects = nativePolicyObjects(entry, { configName: config.configName, namespace: config.namespace, excludedNamespaces: policy.excludedNamespaces, ...(owner?.uid ? { owner } : {}) });
    return [...(objects.params ? [objects.params] : []), objects.policy, objects.binding];
  });
  const statusLines = cluster ? await nativeStatusLines(cluster, config, engines, signal) : '';
  return engineComments(engines) + statusLines + [desired.mutating, desired.validating, ...native, ...rbac].map((object) => stringify(object)).join('---\n');
}

/**
 * Which entries kube-apiserver runs: as the cluster's discovery says when there is one, else as a
 * kube-apiserver of --kubernetes-version (or the current release) would.
 */
async function decideRenderedEngines(policy: Policy, readSupport: (() => Promise<Awaited<ReturnType<typeof readNativeSupport>>>) | undefined, version: { major: number; minor: number } | undefined): Promise<EngineDecisions> {
  if (policy.entries.every((entry) => (entry.engine ?? 'webhook') === 'webhook')) return { native: [], fellBack: [], refused: [] };
  const support = readSupport ? await readSupport() : nativeSupportOfVersion(version ?? CURRENT_KUBERNETES_RELEASE, formatKubernetesVersion(version ?? CURRENT_KUBERNETES_RELEASE));
  return decideEngines(policy.entries, support);
}

/**
 * With a cluster, what kube-apiserver said of each native entry's policy now registered there: its
 * type-checking warnings and failing conditions for the current generation, or that it is not
 * there or not checked yet. The objects below are what the server would write, not what is live.
 */
async function nativeStatusLines(cluster: ClusterConnection, config: Config, engines: EngineDecisions, signal: AbortSignal): Promise<string> {
  // kube-apiserver type-checks ValidatingAdmissionPolicies only: a MutatingAdmissionPolicy has no status to read.
  const validating = engines.native.filter((entry) => !entry.nativeMutation);
  if (validating.length === 0) return '';
  const policies = nativeObjectApis(cluster.api, config.namespace).policy;
  const lines = await Promise.all(
    validating.map(async (entry) => {
      const name = nativePolicyName(entry, config);
      return describeTypeCheck(name, await policies.read(name, signal));
    }),
  );
  return `${lines.join('\n')}\n`;
}

/** Comment lines heading the YAML: which entries run where, and why an `auto` one fell back. */
function engineComments(engines: EngineDecisions): string {
  const lines = [
    ...engines.native.map((e) => `# engine ${e.engine}: entry ${e.spec.name} runs inside kube-apiserver (${e.nativeMutation ? 'MutatingAdmissionPolicy' : 'ValidatingAdmissionPolicy'} and Binding below)`),
    ...engines.fellBack.map((f) => `# engine auto: entry ${f.entry} runs in the webhook: ${f.why}`),
  ];
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/** How `render --handler-rbac` prints the handlers' RBAC: objects for kustomize, or the chart's values. */
export type HandlerRbacFormat = 'manifests' | 'values';

/**
 * Only the RBAC custom handlers declared, without the configurations (which the server registers
 * itself and a GitOps tool must not own): a v1 List that kustomize takes as a resource (an empty
 * one when nothing is declared), or the chart's `handlerRbac` values, the same rules the chart
 * binds to its own ServiceAccount. Needs no cluster and no certificates.
 */
export function renderHandlerRbac(config: Config, customWebhooks: readonly Webhook[], serviceAccount: string, format: HandlerRbacFormat): string {
  const objects = handlerRbacObjects(customWebhooks, { name: config.configName, namespace: config.namespace, serviceAccount });
  // The roles share their labels object: written out each time, as YAML anchors would puzzle reviewers.
  if (format === 'manifests') return stringify({ apiVersion: 'v1', kind: 'List', items: objects }, { aliasDuplicateObjects: false });
  const scope = (role: KubeObject) => ({ rules: role['rules'], grantedFor: role.metadata?.annotations?.[GRANTED_FOR] ?? '' });
  const clusterRole = objects.find((o) => o.kind === 'ClusterRole');
  const namespaces = Object.fromEntries(objects.filter((o) => o.kind === 'Role').map((o) => [o.metadata?.namespace, scope(o)]));
  return stringify({ handlerRbac: { cluster: clusterRole ? scope(clusterRole) : { rules: [], grantedFor: '' }, namespaces } });
}

/**
 * Only the RBAC the policy's `native` and `auto` entries need, as a v1 List a kustomize install
 * adds as a resource (an empty one when no entry may go native): the rules the Helm chart grants
 * for the same policy. Needs no cluster and no certificates.
 */
export async function renderNativeRbac(config: Config, serviceAccount: string): Promise<string> {
  const { policy } = await loadPolicyOrThrow(config.policyFile, { ownNamespace: config.namespace, ...(config.kubernetesVersion ? { kubernetesVersion: config.kubernetesVersion } : {}) });
  const objects = nativeRbacObjects(policy.entries, { configName: config.configName, namespace: config.namespace, serviceAccount });
  return stringify({ apiVersion: 'v1', kind: 'List', items: objects }, { aliasDuplicateObjects: false });
}

/**
 * Only the RBAC the background audit needs for the policy (`--reports`), as a v1 List a kustomize
 * install adds as a resource (an empty one when no rule is reported): the rules the Helm chart
 * grants for the same policy and values. Needs no cluster and no certificates.
 */
export async function renderReportsRbac(config: Config, serviceAccount: string): Promise<string> {
  const [{ reportsRbacObjects }, { REPORT_APIS }] = await Promise.all([import('../reports/reports-rbac.js'), import('../reports/report-api.js')]);
  const { policy, webhooks } = await loadPolicyOrThrow(config.policyFile, { ownNamespace: config.namespace, ...(config.kubernetesVersion ? { kubernetesVersion: config.kubernetesVersion } : {}) });
  const objects = reportsRbacObjects(policy.entries, webhooks, { configName: config.configName, namespace: config.namespace, serviceAccount }, { api: config.reports === 'metrics' ? undefined : REPORT_APIS[config.reportsApi], events: config.reportsEvents });
  return stringify({ apiVersion: 'v1', kind: 'List', items: objects }, { aliasDuplicateObjects: false });
}
