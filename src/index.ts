/**
 * The public library API: the handler types and helpers to write custom webhooks, and
 * `runKubeAdmissionServer` to serve them with the server's whole lifecycle (TLS, self-check,
 * registration, reload, teardown), configured by the same flags and environment as the binary.
 * The guide is docs/writing-webhooks.md in the repository.
 *
 * @packageDocumentation
 */
import { serve } from './commands/serve.js';
import { loadConfig, processEnvironment, type EnvironmentProbe } from './config/load-config.js';
import { createLogger } from './lifecycle/logger.js';
import { EXIT_INVALID_CONFIG, EXIT_OK } from './lifecycle/exit-codes.js';
import { runServer } from './lifecycle/run-server.js';
import type { Webhook } from './admission/types.js';

// The handler API (admission/), webhooks and their matching (webhooks/), the policy file (policy/).
export * from './admission/types.js';
export { webhookPath } from './webhooks/group-path.js';
export { WebhookRegistry } from './webhooks/registry.js';
export type { GroupingMode, SharedMatch, WebhookGroup } from './webhooks/grouping.js';
export type { Engine, ReportSettings } from './policy/policy.js';
export { computePatch, applyPatch, type PatchOperation } from './admission/patch.js';
export { loadPolicyFile, parsePolicy } from './policy/policy-file.js';
export { WEBHOOK_DEFAULTS } from './webhooks/webhook-spec-fields.js';
export {
  POLICY_API_VERSION,
  POLICY_KIND,
  type Policy,
  type PolicyEntry,
  type PolicyLoadResult,
  type PolicyOptions,
} from './policy/policy.js';
export { DEFAULT_EXCLUDED_NAMESPACES, NAMESPACE_NAME_LABEL, excludedNamespaceRequirement, isExcludedNamespace } from './webhooks/excluded-namespaces.js';
export { applyMode, truncateWarning, isValidAuditAnnotationKey, MAX_WARNING_LENGTH, DEFAULT_AUDIT_KEY, type ModeOptions } from './admission/mode.js';
export {
  defineValidatingWebhook,
  defineMutatingWebhook,
  WebhookDefinitionError,
  type WebhookDefinition,
  type WebhookFields,
  type ValidatingWebhookDefinition,
  type MutatingWebhookDefinition,
  type KindWebhookDefinition,
  type ValidatingKindWebhookDefinition,
  type MutatingKindWebhookDefinition,
} from './webhooks/define-webhook.js';
export { BUILT_IN_KIND_TABLE, defineKind, isBuiltInKind, type BuiltInKindName, type KindInfo, type KindLocation } from './admission/kinds/kind-table.js';
export type { KindRef, ObjectOf } from './admission/kinds/kind-objects.js';
export type { BuiltInKindObjects } from './admission/kinds/models.js';
/** The Kubernetes object types of the built-in kinds as a review carries them (`k8s.V1Container`). */
export type * as k8s from './admission/kinds/models.js';
export { rulesForKinds, DEFAULT_KIND_OPERATIONS } from './admission/kinds/kind-rules.js';
export { podSpecsOf, containersOf, describeContainer, WORKLOAD_KINDS, type PodSpecLocation, type ContainerRef, type ContainerKind, type JsonRecord } from './admission/pod-specs.js';
export { normalizeImage } from './admission/image-reference.js';
export { BUILT_IN_RULES } from './policy/rules/index.js';
export type { RuleKind, CompiledRule, CompiledValidatingRule, CompiledMutatingRule, CompiledRequestRule } from './policy/rule-kind.js';
export { setLabel, removeLabel, setAnnotation, removeAnnotation, InvalidMetadataError, type WithMetadata } from './admission/edits/metadata-edits.js';
export { workloadPodSpecs, workloadContainers, type WorkloadPodSpec, type WorkloadContainer, type AnyObject } from './admission/edits/workload-containers.js';
export { addToleration, setEnvVar, addVolume, type ContainerFilter } from './admission/edits/pod-spec-edits.js';
export type { HandlerLogger, HandlerLogFn, HandlerMetrics, HandlerCounter, HandlerGauge, HandlerHistogram, MetricLabels, MetricOptions } from './admission/handler-services.js';
export { PERMISSION_VERBS, type HandlerPermission } from './admission/handler-permissions.js';
export type { Config, LogFormat, LogLevel, ReportsApi, ReportsMode, TeardownPolicy, TlsMode } from './config/types.js';
export type { EnvironmentProbe } from './config/load-config.js';
export { EXIT_OK, EXIT_FAILURE, EXIT_INVALID_CONFIG } from './lifecycle/exit-codes.js';
/** Trying webhooks without a cluster: what `evaluate` and `test` do, for your own handlers too. */
export { evaluateObjects, type EvaluateOptions, simulate, type SimulationOptions } from './tools/evaluation.js';
export type { RequestShape } from './kube/evaluation/request-shape.js';
export type { KubernetesVersion } from './util/kubernetes-version.js';
export type { Authorize, AuthorizationAnswer, AuthorizationQuestion, AuthorizationUser } from './cel/library/authorizer.js';
export type { AskFailure, AskResult, AuthorizationSource } from './cel/authorization-answers.js';
export type { EvaluatedObject } from './tools/evaluate-report.js';
export type { ObjectOutcome, WebhookOutcome, SimulationPathOptions, RunHandler, HandlerRun, HandlerVerdict } from './kube/evaluation/simulate.js';
export type { EvaluationPathOptions, DiscoveredKind } from './kube/evaluation/evaluate-objects.js';
export { readManifests, parseManifests, ManifestError, type Manifest } from './tools/manifests.js';
export { admissionRequestFor, type RequestOptions } from './kube/evaluation/admission-request.js';
export { webhookMatches, type MatchResult } from './webhooks/webhook-match.js';
/** Handlers tested without a cluster, as the server runs them (docs/writing-webhooks.md, "Test your handlers"). */
export { admissionRequest, type ReviewRequestOptions } from './tools/review-request.js';
export { reviewWebhook, reviewPolicy, type ReviewOptions, type PolicyReviewOptions, type WebhookReview } from './tools/handler-review.js';

/** How runKubeAdmissionServer is configured besides the flags and environment. */
export interface RunKubeAdmissionServerOptions {
  /**
   * Your handlers. They are served alone unless --policy-file (POLICY_FILE) names a policy, whose
   * entries are then served next to them (custom names must not collide with them).
   */
  webhooks?: readonly Webhook[];
  /** Command-line arguments (default: process.argv.slice(2)). */
  argv?: readonly string[];
  /** Environment to read configuration from (default: the process's). */
  environment?: EnvironmentProbe;
  /**
   * Aborting it starts the graceful shutdown. Default: the first SIGTERM or SIGINT does;
   * the handlers are removed again when the server has stopped.
   */
  stopSignal?: AbortSignal;
  /** Called once the server is ready, with the ports it listens on (useful with `--port 0`). */
  onReady?: (ports: { port: number; healthPort: number }) => void;
}

/** `serve` as a program on the library runs it: its own handlers, a policy only when one is named. */
const OWN_HANDLERS_SERVE: typeof serve = { ...serve, servesOwnHandlers: true };

/**
 * Runs the server until it is told to stop and resolves with the exit code of the interface
 * (0 clean, 1 failure, 2 invalid configuration). It never exits the process itself:
 * `process.exitCode = await runKubeAdmissionServer({ webhooks })`.
 */
export async function runKubeAdmissionServer(options: RunKubeAdmissionServerOptions = {}): Promise<number> {
  // The server's command line only: a program of its own has no render or evaluate.
  const loaded = loadConfig(options.argv ?? process.argv.slice(2), options.environment ?? processEnvironment, [OWN_HANDLERS_SERVE]);
  if (loaded.kind === 'help') {
    process.stdout.write(loaded.text);
    return EXIT_OK;
  }
  if (loaded.kind === 'invalid') {
    process.stderr.write(`invalid configuration:\n${loaded.problems.map((p) => `  ${p}\n`).join('')}`);
    return EXIT_INVALID_CONFIG;
  }
  const stop = new AbortController();
  const onSignal = (): void => stop.abort(new Error('signal'));
  if (!options.stopSignal) {
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  try {
    return await runServer(loaded.config, {
      stopSignal: options.stopSignal ?? stop.signal,
      logger: createLogger(loaded.config.logLevel, 1, { format: loaded.config.logFormat }),
      customWebhooks: options.webhooks ?? [],
      ...(options.onReady ? { onReady: options.onReady } : {}),
    });
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
