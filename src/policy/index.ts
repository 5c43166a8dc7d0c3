/** The policy module's public surface: what the rest of the server and library users import. */
export * from './types.js';
export { WebhookRegistry } from './registry.js';
export { computePatch, applyPatch, type PatchOperation } from './patch.js';
export { loadPolicyFile, parsePolicy } from './policy-file.js';
export {
  POLICY_API_VERSION,
  POLICY_KIND,
  WEBHOOK_DEFAULTS,
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
  type ValidatingWebhookDefinition,
  type MutatingWebhookDefinition,
} from './define-webhook.js';
export { podSpecsOf, containersOf, describeContainer, WORKLOAD_KINDS, type PodSpecLocation, type ContainerRef, type ContainerKind, type JsonRecord } from './pod-specs.js';
export { normalizeImage } from './image-reference.js';
export { BUILT_IN_RULES } from './rules/index.js';
export type { RuleKind, CompiledRule, CompiledValidatingRule, CompiledMutatingRule, CompiledRequestRule } from './rule-kind.js';
