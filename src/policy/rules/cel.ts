import { withAuthorizationAnswers } from '../../cel/authorization-answers.js';
import { readCelProgram } from '../cel-fields.js';
import { actionsOfMode, celDecision } from '../../cel/cel-decision.js';
import { runCelProgram } from '../../cel/validation-program.js';
import type { Authorize } from '../../cel/library/authorizer.js';
import { namespaceObjectName } from '../../admission/namespace-object.js';
import type { NativeRuleSource } from '../policy.js';
import type { RuleKind } from '../rule-kind.js';
import type { AdmissionContext, AdmissionRequest, KubeObject } from '../../admission/types.js';
import type { YamlField } from '../../util/yaml-field.js';
import { readNamedRules } from '../../webhooks/rule-fields.js';
import { resourceFilterMatches, type ResourceFilter } from '../../webhooks/match-resources.js';
import { VALIDATION_ACTIONS, type ValidationAction } from '../../cel/cel-decision.js';

/**
 * The request's namespaceObject. The server's Namespace cache may not have a namespace created
 * moments ago (or may not have synced): then the rule cannot decide and says why, and the
 * webhook's failurePolicy answers (kube-apiserver would read the namespace from its own cache or
 * storage; this server makes no API call per review).
 */
function namespaceObjectFor(request: AdmissionRequest, context: AdmissionContext): KubeObject | null {
  if (context.namespaceObject !== undefined) return context.namespaceObject;
  const name = namespaceObjectName(request);
  if (name === undefined) return null;
  throw new Error(`namespace "${name}" is not in this server's Namespace cache (yet): namespaceObject cannot be read; answered by failurePolicy`);
}

/** resourceNames and excludeResourceRules; undefined when neither is set, null after reporting a problem. */
function readResourceFilter(fields: Map<string, YamlField>): ResourceFilter | undefined | null {
  const namesField = fields.get('resourceNames');
  const excludeField = fields.get('excludeResourceRules');
  if (!namesField && !excludeField) return undefined;
  const resourceNames = namesField ? namesField.stringList(() => undefined) : [];
  const excludeResourceRules = excludeField ? readNamedRules(excludeField) : [];
  return resourceNames && excludeResourceRules ? { resourceNames, excludeResourceRules } : null;
}

/**
 * A ValidatingAdmissionPolicyBinding's validationActions, which replace the entry's mode: a set
 * of Deny, Warn and Audit, with Deny and Warn never together (kube-apiserver refuses that
 * binding). Undefined when absent, null after reporting a problem.
 */
function readValidationActions(fields: Map<string, YamlField>): ValidationAction[] | undefined | null {
  const field = fields.get('validationActions');
  if (!field) return undefined;
  const actions = field.stringList((value) => ((VALIDATION_ACTIONS as readonly string[]).includes(value) ? undefined : `unsupported validation action "${value}"; use ${VALIDATION_ACTIONS.join(', ')}`));
  if (!actions) return null;
  const problems = [
    actions.length === 0 ? 'must list at least one of Deny, Warn, Audit' : undefined,
    new Set(actions).size !== actions.length ? 'must not repeat an action' : undefined,
    actions.includes('Deny') && actions.includes('Warn') ? 'must not hold both Deny and Warn (kube-apiserver refuses that binding; Deny already shows the message)' : undefined,
    fields.has('mode') ? 'replaces mode: set one of them, not both' : undefined,
  ].filter((p): p is string => p !== undefined);
  for (const problem of problems) field.report(problem);
  return problems.length > 0 ? null : (actions as ValidationAction[]);
}

/**
 * Rules written in CEL, shaped like a ValidatingAdmissionPolicy's spec: `variables` and
 * `validations` (expression, message, messageExpression, reason), with `object`, `oldObject`,
 * `request`, `params` (the entry's), `namespaceObject` (when the caller knows it) and
 * `authorizer` (answered by the policy's authorization source). Every expression is compiled
 * once, here; `rules` is required (there is no sensible default).
 */
export const celRule: RuleKind = {
  kind: 'cel',
  type: 'validating',
  ownFields: ['variables', 'validations', 'auditAnnotations', 'validationActions', 'resourceNames', 'excludeResourceRules'],
  compile(_params, entry, fields, options) {
    const read = readCelProgram(fields, entry);
    const validationActions = readValidationActions(fields);
    const filter = readResourceFilter(fields);
    if (!read || validationActions === null || filter === null) return undefined;
    const { program, reads } = read;
    const usesAuthorizer = reads.has('authorizer');
    const readsNamespaceObject = reads.has('namespaceObject');
    const written = (name: string): unknown => fields.get(name)?.node.toJSON() as unknown;
    const native = {
      variables: (written('variables') ?? []) as NativeRuleSource['variables'],
      validations: written('validations') as NativeRuleSource['validations'],
      auditAnnotations: (written('auditAnnotations') ?? []) as NativeRuleSource['auditAnnotations'],
      ...(validationActions ? { validationActions } : {}),
      ...(fields.has('params') ? { params: written('params') } : {}),
      ...(filter?.resourceNames.length ? { resourceNames: filter.resourceNames } : {}),
      ...(filter?.excludeResourceRules.length
        ? { excludeResourceRules: filter.excludeResourceRules.map(({ rule, resourceNames }) => ({ ...rule, ...(resourceNames.length ? { resourceNames } : {}) })) }
        : {}),
    } satisfies NativeRuleSource;
    return {
      type: 'validating',
      native,
      usesAuthorizer,
      readsNamespaceObject,
      decide(request, context, mode, source) {
        if (filter && !resourceFilterMatches(filter, request)) return { allowed: true };
        const decideWith = (authorize?: Authorize) => {
          const run = runCelProgram(program, reads, request, readsNamespaceObject ? namespaceObjectFor(request, context) : null, authorize);
          return celDecision(run, validationActions ?? actionsOfMode(mode), context.webhook.failurePolicy, source);
        };
        return usesAuthorizer ? withAuthorizationAnswers(options.authorization, context.signal, decideWith) : decideWith();
      },
    };
  },
};
