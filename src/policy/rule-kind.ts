import type { NativeMutationSource, NativeRuleSource, PolicyOptions } from './policy.js';
import type { AdmissionContext, AdmissionRequest, KubeObject, RuleMode, RuleWithOperations, ValidationDecision, WebhookType } from '../admission/types.js';
import type { YamlField } from '../util/yaml-field.js';

/** A validating rule with its parameters bound: what is wrong with an object, one finding per problem. */
export interface CompiledValidatingRule {
  type: 'validating';
  /** What is wrong with `object`: one finding per problem, none when it passes. */
  check(object: KubeObject): string[];
}

/**
 * A mutating rule with its parameters bound: edits `object` (a private copy) in place and
 * returns one description per change; none when the object already has what the rule wants,
 * which keeps the rule idempotent under reinvocation.
 */
export interface CompiledMutatingRule {
  type: 'mutating';
  /** Edits `object` in place; one description per change. */
  mutate(object: KubeObject): string[];
  /**
   * The rule as a MutatingAdmissionPolicy could carry it (defaultLabels).
   * @internal
   */
  nativeMutation?: NativeMutationSource;
}

/**
 * A validating rule that decides from the whole request (a `cel` rule reads oldObject, request,
 * the namespace); throws when it cannot decide, so the webhook's failurePolicy answers.
 */
export interface CompiledRequestRule {
  type: 'validating';
  /** Some expression reads `authorizer`: the server must be able to ask kube-apiserver (SubjectAccessReviews). */
  usesAuthorizer: boolean;
  /** Some expression reads namespaceObject: the server must keep its Namespace cache. */
  readsNamespaceObject: boolean;
  /**
   * The rule as a ValidatingAdmissionPolicy could carry it (cel rules).
   * @internal
   */
  native?: NativeRuleSource;
  /** The decision for the whole request in `mode` (a promise when an authorizer check had to be asked); throws when it cannot decide. */
  decide(request: AdmissionRequest, context: AdmissionContext, mode: RuleMode, source: string): ValidationDecision | Promise<ValidationDecision>;
}

/** A rule with its parameters bound, of any of the three shapes. */
export type CompiledRule = CompiledValidatingRule | CompiledMutatingRule | CompiledRequestRule;

/** A built-in rule as the policy file names it (`kind: denyPrivileged`). */
export interface RuleKind {
  kind: string;
  type: WebhookType;
  /** What the webhook is registered for unless the entry sets `rules`; none: `rules` is required. */
  defaultRules?: RuleWithOperations[];
  /** Entry fields besides the common ones that only this kind reads (cel: variables, validations). */
  ownFields?: readonly string[];
  /**
   * Reads the entry's `params` (undefined when the entry has none) and binds them; reports
   * every problem through the field and returns undefined when there was one. `fields` holds
   * every field of the entry; `options` are the policy's (who answers authorizer checks).
   * Called by the policy loader.
   * @internal
   */
  compile(params: YamlField | undefined, entry: YamlField, fields: Map<string, YamlField>, options: PolicyOptions): CompiledRule | undefined;
}

const OPERATIONS_CREATE_UPDATE: RuleWithOperations['operations'] = ['CREATE', 'UPDATE'];

/** Pods. */
export function podRules(operations: RuleWithOperations['operations'] = OPERATIONS_CREATE_UPDATE): RuleWithOperations {
  return { operations: [...operations], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' };
}

/** The workload kinds that carry a pod template (podSpecsOf reads them). */
export function workloadRules(operations: RuleWithOperations['operations'] = OPERATIONS_CREATE_UPDATE): RuleWithOperations[] {
  return [
    { operations: [...operations], apiGroups: [''], apiVersions: ['v1'], resources: ['replicationcontrollers', 'podtemplates'], scope: 'Namespaced' },
    {
      operations: [...operations],
      apiGroups: ['apps'],
      apiVersions: ['v1'],
      resources: ['deployments', 'statefulsets', 'daemonsets', 'replicasets'],
      scope: 'Namespaced',
    },
    { operations: [...operations], apiGroups: ['batch'], apiVersions: ['v1'], resources: ['jobs', 'cronjobs'], scope: 'Namespaced' },
  ];
}

/** Pods and every workload with a pod template, on CREATE and UPDATE. */
export function podAndWorkloadRules(): RuleWithOperations[] {
  return [podRules(), ...workloadRules()];
}

/**
 * `kubectl debug` adds a container to a running Pod through this subresource, an UPDATE that
 * carries the whole Pod; kube-apiserver lets nothing else of the Pod change there. A rule
 * registered for `pods` alone is never called for it.
 */
export function ephemeralContainerRules(): RuleWithOperations {
  return { operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/ephemeralcontainers'], scope: 'Namespaced' };
}

/** For rules that judge the containers themselves: pods, their debug containers, and every workload. */
export function containerRules(): RuleWithOperations[] {
  return [podRules(), ephemeralContainerRules(), ...workloadRules()];
}
