import type { KubernetesVersion } from '../util/kubernetes-version.js';
import type { AuthorizationSource } from '../cel/authorization-answers.js';
import type { GroupingMode } from '../webhooks/grouping.js';
import type { MatchCondition, RuleMode, RuleWithOperations, Webhook, WebhookSpec } from '../admission/types.js';

/** Version of the policy file format this server reads (`apiVersion:` at the top of the file). */
export const POLICY_API_VERSION = 'kube-admission-server/v1';
/** The policy file's `kind`. */
export const POLICY_KIND = 'Policy';

/**
 * Who runs an entry: `webhook` this server (as before engines existed), `native` kube-apiserver
 * itself as a ValidatingAdmissionPolicy (cel) or MutatingAdmissionPolicy (defaultLabels), `auto` kube-apiserver where the cluster and the rule
 * allow it and this server otherwise.
 */
export type Engine = 'webhook' | 'native' | 'auto';

/** A named rule as a ValidatingAdmissionPolicy writes it in matchConstraints. */
export interface NamedRuleWithOperations extends RuleWithOperations {
  resourceNames?: string[];
}

/**
 * What a `kind: cel` entry says beyond its webhook fields, as written (already checked and
 * compiled by the cel rule): the parts of a ValidatingAdmissionPolicy and its binding that
 * registration writes when the entry runs inside kube-apiserver.
 */
export interface NativeRuleSource {
  variables: Array<{ name: string; expression: string }>;
  validations: Array<{ expression: string; message?: string; messageExpression?: string; reason?: string }>;
  auditAnnotations: Array<{ key: string; valueExpression: string }>;
  /** Undefined: the entry's mode decides (enforce Deny, warn Warn, audit Audit). */
  validationActions?: Array<'Deny' | 'Warn' | 'Audit'>;
  /** The entry's `params`, whole. */
  params?: unknown;
  resourceNames?: string[];
  excludeResourceRules?: NamedRuleWithOperations[];
  matchConditions?: MatchCondition[];
}

/**
 * What a mutating built-in says, as written (already checked by its rule), for the
 * MutatingAdmissionPolicy registration writes when the entry runs inside kube-apiserver.
 */
export type NativeMutationSource =
  | { kind: 'defaultLabels'; labels: Record<string, string>; annotations: Record<string, string> }
  | { kind: 'defaultResources'; requests: Partial<Record<'cpu' | 'memory', string>>; limits: Partial<Record<'cpu' | 'memory', string>> };


/** How a result's importance is graded in a report (OpenReports' and wgpolicyk8s' severities). */
export const REPORT_SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type ReportSeverity = (typeof REPORT_SEVERITIES)[number];

/** Whether the background audit reports an entry's results, and how they are labelled. */
export interface ReportSettings {
  /** The entry's `report`, else the policy's (default true, in every mode). */
  enabled: boolean;
  severity?: ReportSeverity;
  category?: string;
}

/** One entry of the policy file's `webhooks` list, after validation and defaulting. */
export interface PolicyEntry {
  /** The webhook it becomes (what registration publishes). */
  spec: WebhookSpec;
  /** The built-in rule it runs, e.g. `denyPrivileged`. */
  kind: string;
  mode: RuleMode;
  /**
   * A cel entry's ValidatingAdmissionPolicy parts (absent for the other kinds).
   * @internal
   */
  native?: NativeRuleSource;
  /**
   * A mutating built-in's MutatingAdmissionPolicy parts (defaultLabels; absent for the other kinds).
   * @internal
   */
  nativeMutation?: NativeMutationSource;
  /** Who runs it (the entry's `engine`, else the policy's); absent: the webhook. */
  engine?: Engine;
  /** What the background audit does with its results (validating entries; mutating ones are never reported). */
  report: ReportSettings;
  /**
   * A digest of the entry as written (its YAML, key order aside): an entry whose digest is the
   * same in a new version of the file means the same, so the background audit leaves its results be.
   * @internal
   */
  digest: string;
  /**
   * Fields the entry sets that only a webhook uses (they keep it from running natively).
   * @internal
   */
  webhookOnlyFields?: readonly string[];
  /**
   * What decides its answers apart from its name (entry-definition.ts): equal definitions, equal answers.
   * @internal
   */
  definition?: string;
}

/** A validated policy file. */
export interface Policy {
  /** The file it came from, as given. */
  path: string;
  /**
   * Namespaces no webhook is called for (default `[kube-system]`). Registration adds the
   * server's own namespace and merges `excludedNamespaceRequirement(...)` into every webhook's
   * namespaceSelector; handlers check it again.
   */
  excludedNamespaces: string[];
  /**
   * How the entries (and custom handlers) are registered: `auto` groups the ones kube-apiserver
   * can treat alike into one webhook each; `none` registers one webhook per entry.
   */
  grouping: GroupingMode;
  /** The engine of entries that name none (`webhook` unless the file says otherwise). */
  engine?: Engine;
  /** Whether entries that say nothing are reported by the background audit (default true). */
  report: boolean;
  entries: PolicyEntry[];
}

/** How a policy file is read. */
export interface PolicyOptions {
  /** The server's own namespace: excluded in the handlers like `excludedNamespaces`. */
  ownNamespace?: string;
  /**
   * The kube-apiserver the configurations are written to: matchConditions are compiled as it
   * compiles them (refused at load where it would refuse them). Default: the current release.
   */
  kubernetesVersion?: KubernetesVersion;
  /**
   * Who answers the `authorizer` checks of cel rules: the server asks kube-apiserver
   * (SubjectAccessReviews), evaluate and test take answers given to them. Without one, a check
   * fails its expression.
   */
  authorization?: AuthorizationSource;
}

/** A loaded policy with its webhooks, or every problem of the file (with its line). */
export type PolicyLoadResult =
  | { ok: true; policy: Policy; webhooks: Webhook[] }
  /** Each error reads `<path>:<line>:<col>: <what is wrong and what would be valid>`. */
  | { ok: false; errors: string[] };
