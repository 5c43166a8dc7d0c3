/**
 * The defaults kube-apiserver fills into Validating and MutatingAdmissionPolicies and their bindings
 * (admissionregistration/v1 zz_generated.defaults.go): failurePolicy Fail; matchPolicy
 * Equivalent and empty selectors in matchConstraints / matchResources; rule scope `*`.
 */
import { isRecord, type KubeObject } from './objects.js';

type Json = Record<string, unknown>;

function defaultMatchResources(match: Json): void {
  match.matchPolicy ??= 'Equivalent';
  match.namespaceSelector ??= {};
  match.objectSelector ??= {};
  for (const field of ['resourceRules', 'excludeResourceRules']) {
    const rules = match[field];
    if (Array.isArray(rules)) for (const rule of rules) if (isRecord(rule)) rule.scope ??= '*';
  }
}

export function applyPolicyDefaults(object: KubeObject): void {
  const spec = isRecord(object.spec) ? object.spec : (object.spec = {});
  spec.failurePolicy ??= 'Fail';
  if (isRecord(spec.matchConstraints)) defaultMatchResources(spec.matchConstraints);
}

export function applyBindingDefaults(object: KubeObject): void {
  const spec = isRecord(object.spec) ? object.spec : (object.spec = {});
  if (isRecord(spec.matchResources)) defaultMatchResources(spec.matchResources);
}
