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
  entries: PolicyEntry[];
}

/** How a policy file is read. */
export interface PolicyOptions {
  /** The server's own namespace: excluded in the handlers like `excludedNamespaces`. */
  ownNamespace?: string;
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
} as const);

/** The failurePolicy of a webhook whose entry sets none: closed only for an enforcing validating rule. */
export function defaultFailurePolicy(type: WebhookType | undefined, mode: RuleMode): FailurePolicy {
  if (mode !== 'enforce') return WEBHOOK_DEFAULTS.nonEnforcingFailurePolicy;
  return type === 'mutating' ? WEBHOOK_DEFAULTS.mutatingFailurePolicy : WEBHOOK_DEFAULTS.validatingFailurePolicy;
}
