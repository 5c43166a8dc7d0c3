import { imageFromPrefix, normalizeRegistryPrefix, registryPrefixProblem } from '../../admission/image-reference.js';
import { containersOf, describeContainer, podSpecsOf } from '../../admission/pod-specs.js';
import { containerRules, type RuleKind } from '../rule-kind.js';
import type { KubeObject } from '../../admission/types.js';
import { required } from '../../util/yaml-field.js';

export interface AllowedRegistriesParams {
  /** Registry prefixes such as `registry.example.com/` or `ghcr.io/acme/`; a bare host allows all of it. */
  registries: string[];
}

/** Every container image (init and ephemeral included) must come from one of the listed prefixes. */
export function checkRegistries(object: KubeObject, params: AllowedRegistriesParams): string[] {
  const prefixes = params.registries.map(normalizeRegistryPrefix);
  const allowedText = prefixes.join(', ');
  const findings: string[] = [];
  for (const location of podSpecsOf(object)) {
    for (const ref of containersOf(location.spec)) {
      const image = ref.container['image'];
      const who = describeContainer(ref, location);
      if (typeof image !== 'string' || image.trim() === '') {
        findings.push(`${who} has no image; it must name one from an allowed registry (allowed: ${allowedText})`);
      } else if (!prefixes.some((prefix) => imageFromPrefix(image, prefix))) {
        findings.push(`${who} image "${image}" is not from an allowed registry (allowed: ${allowedText})`);
      }
    }
  }
  return findings;
}

export const allowedRegistries: RuleKind = {
  kind: 'allowedRegistries',
  type: 'validating',
  defaultRules: containerRules(),
  compile(params, entry) {
    if (!params) {
      entry.report('allowedRegistries needs "params.registries": a list of registry prefixes such as ghcr.io/acme/');
      return undefined;
    }
    const fields = params.map(['registries']);
    if (!fields) return undefined;
    const registries = required(fields, 'registries', params, (f) => f.stringList(registryPrefixProblem), 'a list of registry prefixes such as ghcr.io/acme/');
    if (!registries) return undefined;
    if (registries.length === 0) {
      fields.get('registries')?.report('must list at least one registry prefix (an empty list would refuse every image)');
      return undefined;
    }
    const bound: AllowedRegistriesParams = { registries };
    return { type: 'validating', check: (object) => checkRegistries(object, bound) };
  },
};
