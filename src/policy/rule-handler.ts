import { isExcludedNamespace } from '../webhooks/excluded-namespaces.js';
import { applyMode } from '../admission/mode.js';
import { copyObject } from '../admission/patch.js';
import type { CompiledMutatingRule, CompiledRequestRule, CompiledValidatingRule } from './rule-kind.js';
import type { AdmissionRequest, MutatingHandler, RuleMode, ValidatingHandler } from '../admission/types.js';

/** Handlers known never to modify the request they are given (the policy file's validating rules). */
const readOnlyHandlers = new WeakSet<object>();

/** Whether `handler` only reads its request, so a caller may hand it a shared one (evaluate does). */
export function readsRequestOnly(handler: object): boolean {
  return readOnlyHandlers.has(handler);
}

function readOnly<T extends object>(handler: T): T {
  readOnlyHandlers.add(handler);
  return handler;
}

export interface RuleHandlerOptions {
  mode: RuleMode;
  /** Requests in these namespaces are allowed untouched. */
  excludedNamespaces: readonly string[];
  /** Prefix of warnings (the webhook name). */
  source: string;
}

/** Requests a rule does not look at: excluded namespaces and anything without a new object (DELETE). */
function passesThrough(request: AdmissionRequest, options: RuleHandlerOptions): boolean {
  return isExcludedNamespace(request.namespace, options.excludedNamespaces) || request.operation === 'DELETE' || request.object === null;
}

/**
 * A validating handler for a rule. On UPDATE only findings the old object did not already have
 * count, so objects created before the rule existed can still be updated (scaled, relabelled,
 * finalized); their new pods are still checked when they are created.
 */
export function validatingRuleHandler(rule: CompiledValidatingRule, options: RuleHandlerOptions): ValidatingHandler {
  return readOnly((request) => {
    if (passesThrough(request, options) || request.object === null) return { allowed: true };
    let findings = rule.check(request.object);
    if (request.operation === 'UPDATE' && request.oldObject && findings.length > 0) {
      const before = new Set(rule.check(request.oldObject));
      findings = findings.filter((finding) => !before.has(finding));
    }
    return applyMode(findings, options.mode, { source: options.source });
  });
}

/**
 * A mutating handler for a rule: enforce edits request.object (the server diffs it against its
 * own copy of the original) and returns it; warn and audit mutate a copy only to report what the
 * rule would have changed, for a dry rollout.
 */
export function mutatingRuleHandler(rule: CompiledMutatingRule, options: RuleHandlerOptions): MutatingHandler {
  return (request) => {
    if (passesThrough(request, options) || request.object === null) return { allowed: true };
    const target = options.mode === 'enforce' ? request.object : copyObject(request.object);
    const changes = rule.mutate(target);
    if (changes.length === 0) return { allowed: true };
    if (options.mode === 'enforce') return { allowed: true, object: target };
    return applyMode(
      changes.map((change) => `would ${change}`),
      options.mode,
      { source: options.source, auditKey: 'policy-would-mutate' },
    );
  };
}

/** A validating handler for a rule that reads the whole request; it sees DELETE (oldObject) too. */
export function requestRuleHandler(rule: CompiledRequestRule, options: RuleHandlerOptions): ValidatingHandler {
  return readOnly((request, context) => {
    if (isExcludedNamespace(request.namespace, options.excludedNamespaces)) return { allowed: true };
    return rule.decide(request, context, options.mode, options.source);
  });
}
