/** The policy module's public surface: what the rest of the server and library users import. */
export * from './types.js';
export { webhookPath } from './group-path.js';
export { WebhookRegistry } from './registry.js';
export type { GroupingMode, SharedMatch, WebhookGroup } from './grouping.js';
export type { Engine } from './policy.js';
export { computePatch, applyPatch, type PatchOperation } from './patch.js';
export { loadPolicyFile, parsePolicy } from './policy-file.js';
export { WEBHOOK_DEFAULTS } from './webhook-spec-fields.js';
export {
  POLICY_API_VERSION,
  POLICY_KIND,
  type Policy,
  type PolicyEntry,
  type PolicyLoadResult,
  type PolicyOptions,
} from './policy.js';
export { DEFAULT_EXCLUDED_NAMESPACES, NAMESPACE_NAME_LABEL, excludedNamespaceRequirement, isExcludedNamespace } from './excluded-namespaces.js';
export { applyMode, truncateWarning, isValidAuditAnnotationKey, MAX_WARNING_LENGTH, DEFAULT_AUDIT_KEY, type ModeOptions } from './mode.js';
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
} from './define-webhook.js';
export { BUILT_IN_KIND_TABLE, defineKind, isBuiltInKind, type BuiltInKindName, type KindInfo, type KindLocation } from './kinds/kind-table.js';
export type { KindRef, ObjectOf } from './kinds/kind-objects.js';
export type { BuiltInKindObjects } from './kinds/models.js';
/** The Kubernetes object types of the built-in kinds as a review carries them (`k8s.V1Container`). */
export type * as k8s from './kinds/models.js';
export { rulesForKinds, DEFAULT_KIND_OPERATIONS } from './kinds/kind-rules.js';
export { podSpecsOf, containersOf, describeContainer, WORKLOAD_KINDS, type PodSpecLocation, type ContainerRef, type ContainerKind, type JsonRecord } from './pod-specs.js';
export { normalizeImage } from './image-reference.js';
export { BUILT_IN_RULES } from './rules/index.js';
export type { RuleKind, CompiledRule, CompiledValidatingRule, CompiledMutatingRule, CompiledRequestRule } from './rule-kind.js';
export { setLabel, removeLabel, setAnnotation, removeAnnotation, InvalidMetadataError, type WithMetadata } from './edits/metadata-edits.js';
export { workloadPodSpecs, workloadContainers, type WorkloadPodSpec, type WorkloadContainer, type AnyObject } from './edits/workload-containers.js';
export { addToleration, setEnvVar, addVolume, type ContainerFilter } from './edits/pod-spec-edits.js';
export type { HandlerLogger, HandlerLogFn, HandlerMetrics, HandlerCounter, HandlerGauge, HandlerHistogram, MetricLabels, MetricOptions } from './handler-services.js';
export { PERMISSION_VERBS, type HandlerPermission } from './handler-permissions.js';
