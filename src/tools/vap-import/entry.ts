import type { Manifest } from '../manifests.js';
import { bothSelectors, intersectRules } from './match-resources.js';
import { describe, type BindingSpec, type NamedRule, type PolicySpec, type Sourced } from './objects.js';
import { resolveParams } from './params.js';
import type { ImportProblem } from './problems.js';

/** One policy-file entry (kind: cel), as written to the file, and what it came from. */
export interface ImportedEntry {
  entry: Record<string, unknown>;
  from: string;
}

/** A webhook's matchConditions see object, oldObject, request and authorizer; a policy's may read more. */
const POLICY_ONLY_VARIABLES = /\b(params|namespaceObject|variables)\b/;

const toRule = ({ resourceNames: _names, ...rule }: NamedRule): NamedRule => rule;

/** One entry per params object the binding picks; problems name what could not be carried over. */
export function importBinding(policy: Sourced<PolicySpec>, binding: Sourced<BindingSpec>, others: readonly Manifest[], problems: ImportProblem[]): ImportedEntry[] {
  const where = describe(binding);
  const before = problems.length;
  const notImported = (object: string, field: string, problem: string): void => void problems.push({ object, field, problem, effect: 'not imported' });
  const spec = policy.spec;
  const match = spec.matchConstraints ?? {};
  const bound = binding.spec.matchResources ?? {};
  if (!binding.spec.validationActions || binding.spec.validationActions.length === 0) notImported(where, 'spec.validationActions', 'required (Deny, Warn and/or Audit)');
  if (!spec.validations || spec.validations.length === 0) notImported(describe(policy), 'spec.validations', 'this import reads policies with validations; one with only auditAnnotations is not imported');
  const rules = intersectRules(match.resourceRules ?? [], bound.resourceRules);
  if (rules.length === 0) notImported(where, 'spec.matchResources.resourceRules', `no request matches both these rules and the policy's matchConstraints.resourceRules`);
  const names = [...new Set(rules.map((r) => JSON.stringify(r.resourceNames ?? [])))];
  if (names.length > 1) notImported(describe(policy), 'spec.matchConstraints.resourceRules[].resourceNames', 'differ between rules; an entry has one resourceNames list for all its rules');
  for (const [index, condition] of (spec.matchConditions ?? []).entries()) {
    if (POLICY_ONLY_VARIABLES.test(condition.expression)) {
      notImported(describe(policy), `spec.matchConditions[${index}]`, `reads ${POLICY_ONLY_VARIABLES.exec(condition.expression)![1]}, which a webhook's matchConditions cannot: move it into the validations`);
    }
  }
  if (bound.matchPolicy && bound.resourceRules?.length && bound.matchPolicy !== (match.matchPolicy ?? 'Equivalent')) {
    problems.push({ object: where, field: 'spec.matchResources.matchPolicy', problem: `${bound.matchPolicy} differs from the policy's; the entry uses the policy's`, effect: 'left out' });
  }
  for (const [index, validation] of (spec.validations ?? []).entries()) {
    if (validation.fieldPath) problems.push({ object: describe(policy), field: `spec.validations[${index}].fieldPath`, problem: 'an entry reports no field path in its denial', effect: 'left out' });
  }
  const params = resolveParams(policy, binding, others, problems);
  if (!params || problems.slice(before).some((p) => p.effect === 'not imported')) return [];
  const resourceNames = rules[0]?.resourceNames;
  const excludeResourceRules = [...(match.excludeResourceRules ?? []), ...(bound.excludeResourceRules ?? [])];
  const namespaceSelector = bothSelectors(match.namespaceSelector, bound.namespaceSelector);
  const objectSelector = bothSelectors(match.objectSelector, bound.objectSelector);
  return params.map(({ object, suffix }) => ({
    from: `ValidatingAdmissionPolicy ${policy.name}, binding ${binding.name}${object ? `, params ${object.kind} ${object.metadata?.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata?.name}` : ''}`,
    entry: {
      name: suffix === undefined ? binding.name : `${binding.name}-${suffix}`,
      kind: 'cel',
      validationActions: binding.spec.validationActions,
      failurePolicy: spec.failurePolicy ?? 'Fail',
      rules: rules.map(toRule),
      ...(match.matchPolicy ? { matchPolicy: match.matchPolicy } : {}),
      ...(namespaceSelector ? { namespaceSelector } : {}),
      ...(objectSelector ? { objectSelector } : {}),
      ...(resourceNames ? { resourceNames } : {}),
      ...(excludeResourceRules.length > 0 ? { excludeResourceRules } : {}),
      ...(spec.matchConditions?.length ? { matchConditions: spec.matchConditions } : {}),
      ...(object ? { params: object } : {}),
      ...(spec.variables?.length ? { variables: spec.variables } : {}),
      validations: (spec.validations ?? []).map(({ fieldPath: _fieldPath, ...validation }) => validation),
      ...(spec.auditAnnotations?.length ? { auditAnnotations: spec.auditAnnotations } : {}),
    },
  }));
}
