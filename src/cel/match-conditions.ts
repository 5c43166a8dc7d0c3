import type { AdmissionRequest, MatchCondition, WebhookSpec } from '../admission/types.js';
import { DEFAULT_CEL_LIMITS, EvaluationBudget } from './budget.js';
import { compileExpression, type CompiledExpression } from './compile.js';
import { environmentWith, MATCH_CONDITION_VARIABLES } from './environment.js';
import type { Authorize } from './library/authorizer.js';
import { requestAuthorizer } from './request-authorizer.js';
import { toCel } from './values.js';
import { CURRENT_KUBERNETES_RELEASE, formatKubernetesVersion, newExpressionsVersion, type KubernetesVersion } from './kubernetes-version.js';

/** Compiled expressions by text; cleared when it grows past what any policy holds (reloads change texts). */
const compiled = new Map<string, CompiledExpression | string>();
const MAX_CACHED = 1024;

/**
 * A matchCondition's expression compiled as kube-apiserver `target` would when the configuration
 * is written (object, oldObject, typed request, authorizer), with the environment one minor
 * behind its binary (NewExpressions); a problem is a string.
 */
export function compileMatchCondition(expression: string, target: KubernetesVersion = CURRENT_KUBERNETES_RELEASE): CompiledExpression | string {
  const version = newExpressionsVersion(target);
  const key = `${version.minor}\u0000${expression}`;
  let entry = compiled.get(key);
  if (entry === undefined) {
    const env = environmentWith(MATCH_CONDITION_VARIABLES, version);
    const result = compileExpression(env, expression, 'bool');
    entry = result.ok ? result.expression : result.problem;
    if (compiled.size >= MAX_CACHED) compiled.clear();
    compiled.set(key, entry);
  }
  return entry;
}

/**
 * Why kube-apiserver `target` (default: the current release) would refuse to store a
 * matchCondition with `expression`, in a policy file's words; undefined when it would store it.
 */
export function refusalFor(expression: string, target?: KubernetesVersion): string | undefined {
  const compiled = compileMatchCondition(expression, target);
  if (typeof compiled !== 'string') return undefined;
  if (target && typeof compileMatchCondition(expression) !== 'string') {
    const library = formatKubernetesVersion(newExpressionsVersion(target));
    return `CEL expression does not compile for kube-apiserver ${formatKubernetesVersion(target)}, which compiles a new matchCondition with the Kubernetes ${library} CEL library: ${compiled.replace(/^does not compile: /, '')}`;
  }
  return `CEL expression ${compiled}`;
}

/** How a refusal names the condition: `matchCondition "x" of webhook "y": `. */
export function conditionPlace(condition: string, webhook: string): string {
  return `matchCondition "${condition}" of webhook "${webhook}": `;
}

/** Every matchCondition of `webhooks` that kube-apiserver `target` would refuse to store, naming its webhook and why. */
export function matchConditionsRefusedBy(target: KubernetesVersion, webhooks: readonly WebhookSpec[]): string[] {
  return webhooks.flatMap((webhook) =>
    (webhook.matchConditions ?? []).flatMap((condition) => {
      const refused = refusalFor(condition.expression, target);
      return refused === undefined ? [] : [`${conditionPlace(condition.name, webhook.name)}${refused}`];
    }),
  );
}

export type MatchConditionsOutcome = { match: true } | { match: false; condition: string } | { error: string; condition: string };

/**
 * kube-apiserver's matchConditions (local-cluster/CONTRACT.md 3.7): any false skips the webhook; otherwise an
 * error is reported (the caller applies failurePolicy: Fail rejects with 403, Ignore skips).
 * `authorizer` checks are answered by `authorize` (the answers given to evaluate and test); without
 * it a check errors.
 */
export function evaluateMatchConditions(conditions: readonly MatchCondition[] | undefined, request: AdmissionRequest, authorize?: Authorize): MatchConditionsOutcome {
  if (!conditions || conditions.length === 0) return { match: true };
  const { object, oldObject, ...rest } = request;
  const activation = { object: toCel(object), oldObject: toCel(oldObject), request: toCel(rest), authorizer: requestAuthorizer(request, authorize) };
  let firstError: { error: string; condition: string } | undefined;
  for (const condition of conditions) {
    const expression = compileMatchCondition(condition.expression);
    if (typeof expression === 'string') {
      firstError ??= { error: `expression ${expression}`, condition: condition.name };
      continue;
    }
    try {
      const result = expression.evaluate(activation, new EvaluationBudget(DEFAULT_CEL_LIMITS));
      if (result === false) return { match: false, condition: condition.name };
      if (result !== true) firstError ??= { error: `gave ${typeof result}, not a bool`, condition: condition.name };
    } catch (error) {
      firstError ??= { error: error instanceof Error ? error.message : String(error), condition: condition.name };
    }
  }
  return firstError ?? { match: true };
}
