import { readCelProgram } from '../cel/cel-fields.js';
import { celDecision } from '../cel/cel-decision.js';
import { runCelProgram } from '../cel/validation-program.js';
import type { RuleKind } from '../rule-kind.js';

/**
 * Rules written in CEL, shaped like a ValidatingAdmissionPolicy's spec: `variables` and
 * `validations` (expression, message, messageExpression, reason), with `object`, `oldObject`,
 * `request`, `params` (the entry's) and `namespaceObject` (when the caller knows it). Every
 * expression is compiled once, here; `rules` is required (there is no sensible default).
 */
export const celRule: RuleKind = {
  kind: 'cel',
  type: 'validating',
  ownFields: ['variables', 'validations'],
  compile(_params, entry, fields) {
    const read = readCelProgram(fields, entry);
    if (!read) return undefined;
    const { program, reads } = read;
    return {
      type: 'validating',
      decide(request, context, mode, source) {
        const findings = runCelProgram(program, reads, request, context.namespaceObject ?? null);
        return celDecision(findings, mode, context.webhook.failurePolicy, source);
      },
    };
  },
};
