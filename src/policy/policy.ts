import type { KubernetesVersion } from '../util/kubernetes-version.js';
import type { AuthorizationSource } from './cel/authorization-answers.js';
import type { Engine } from './engine.js';
import type { GroupingMode } from './grouping.js';
import type { NativeMutationSource, NativeRuleSource } from './native-source.js';
import type { FailurePolicy, RuleMode, Webhook, WebhookSpec, WebhookType } from './types.js';

/** Version of the policy file format this server reads (`apiVersion:` at the top of the file). */
export const POLICY_API_VERSION = 'kube-admission-server/v1';
/** The policy file's `kind`. */
export const POLICY_KIND = 'Policy';

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

/** Defaults of every webhook field a policy entry may leave out. */
export const WEBHOOK_DEFAULTS = Object.freeze({
  /** Enforcing validating webhooks fail closed: a broken server must not let forbidden objects in. */
  validatingFailurePolicy: 'Fail',
  /**
   * A rule in `warn` or `audit` cannot deny, so it must not be able to block through a failed
   * call either: whatever its type, it fails open unless the entry says otherwise.
   */
  nonEnforcingFailurePolicy: 'Ignore',
  /** Mutating webhooks fail open (kube-apiserver's good practice); validation catches the rest. */
  mutatingFailurePolicy: 'Ignore',
  sideEffects: 'None',
  /** Short: a slow webhook slows every matching request in the cluster. */
  timeoutSeconds: 5,
  matchPolicy: 'Equivalent',
  reinvocationPolicy: 'Never',
  mode: 'enforce',
  /** One call per write whatever the number of rules: grouped unless the policy says `grouping: none`. */
  grouping: 'auto',
} as const);

/** The failurePolicy of a webhook whose entry sets none: closed only for an enforcing validating rule. */
export function defaultFailurePolicy(type: WebhookType | undefined, mode: RuleMode): FailurePolicy {
  if (mode !== 'enforce') return WEBHOOK_DEFAULTS.nonEnforcingFailurePolicy;
  return type === 'mutating' ? WEBHOOK_DEFAULTS.mutatingFailurePolicy : WEBHOOK_DEFAULTS.validatingFailurePolicy;
}
