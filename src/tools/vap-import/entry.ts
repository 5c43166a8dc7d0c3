import type { Manifest } from '../manifests.js';
import { bothSelectors, intersectRules } from './match-resources.js';
import { describe, type BindingSpec, type NamedRule, type PolicySpec, type Sourced } from './objects.js';
import { guardedProgram, sortConditions, type GuardedConditions } from './match-guard.js';
import { resolveParams } from './params.js';
import type { ImportProblem } from './problems.js';

/** One policy-file entry (kind: cel), as written to the file, and what it came from. */
export interface ImportedEntry {
  entry: Record<string, unknown>;
  from: string;
  /** The object and field a path of the entry (`validations[0].expression`) was made from. */
  origin(path: string): { object: string; field: string };
}

/** Where each part of an entry comes from: the policy's fields by index (the matchConditions kept, the guard made of those moved), the rest from the binding. */
function originOf(policy: Sourced<PolicySpec>, binding: Sourced<BindingSpec>, conditions: GuardedConditions): ImportedEntry['origin'] {
  const variables = policy.spec.variables?.length ?? 0;
  return (path) => {
    const [, field = path, index, rest = ''] = /^([A-Za-z]+)(?:\[(\d+)\])?(.*)$/.exec(path) ?? [];
    const at = Number(index);
    const inPolicy = (spec: string): { object: string; field: string } => ({ object: describe(policy), field: `spec.${spec}` });
    if (field === 'variables' && at >= variables) return inPolicy(`matchConditions[${conditions.moved.map((c) => c.index).join(', ')}].expression (as one guard of the validations)`);
    if (field === 'matchConditions' && index !== undefined) return inPolicy(`matchConditions[${conditions.kept[at]?.index ?? at}]${rest}`);
    if (['validations', 'variables', 'auditAnnotations', 'failurePolicy'].includes(field)) return inPolicy(path);
    if (field === 'params') return { object: describe(binding), field: `spec.paramRef (the params object)${path.slice('params'.length)}` };
    if (field === 'validationActions') return { object: describe(binding), field: `spec.${path}` };
    return { object: `${describe(policy)} with ${describe(binding)}`, field: `the entry's ${path || 'fields'}` };
  };
}

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
  const conditions = sortConditions(spec);
  for (const { index } of conditions.refused) {
    notImported(describe(policy), `spec.matchConditions[${index}]`, "reads namespaceObject, which a webhook's matchConditions cannot: move it into the validations");
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
  const program = guardedProgram(spec, conditions.moved);
  const namespaceSelector = bothSelectors(match.namespaceSelector, bound.namespaceSelector);
  const objectSelector = bothSelectors(match.objectSelector, bound.objectSelector);
  const origin = originOf(policy, binding, conditions);
  return params.map(({ object, suffix }) => ({
    origin,
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
      ...(conditions.kept.length ? { matchConditions: conditions.kept.map((c) => c.condition) } : {}),
      ...(object ? { params: object } : {}),
      ...(program.variables.length ? { variables: program.variables } : {}),
      validations: program.validations,
      ...(program.auditAnnotations.length ? { auditAnnotations: program.auditAnnotations } : {}),
    },
  }));
}
