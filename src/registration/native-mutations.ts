/**
 * The mutations of the mutating built-ins as kube-apiserver runs them in a MutatingAdmissionPolicy:
 * CEL that computes, from the object, exactly the change the built-in's webhook makes
 * (defaultLabels as JSON Patch operations, defaultResources as ApplyConfigurations).
 */
import type { NativeMutationSource } from '../policy/policy.js';
import { POD_TEMPLATE_PATHS } from '../admission/pod-specs.js';

/** A CEL string literal: JSON's escapes (\", \\, \n, \uXXXX) are CEL's too. */
const celString = (value: string): string => JSON.stringify(value);

/** An RFC 6901 reference token: `~` and `/` escaped. */
const pointerToken = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * JSON Patch operations, as CEL, that add each of `defaults` under metadata.<field> where the
 * object lacks the key, and the map itself first where the object has none: applyDefaultLabels'
 * result, never overwriting a value the user set.
 */
function fillAbsentExpression(field: 'labels' | 'annotations', defaults: Record<string, string>): string[] {
  const entries = Object.entries(defaults);
  if (entries.length === 0) return [];
  const map = `object.metadata.${field}`;
  return [
    `(has(${map}) ? [] : [JSONPatch{op: "add", path: "/metadata/${field}", value: {}}])`,
    ...entries.map(
      ([key, value]) =>
        `(has(${map}) && ${celString(key)} in ${map} ? [] : [JSONPatch{op: "add", path: ${celString(`/metadata/${field}/${pointerToken(key)}`)}, value: ${celString(value)}}])`,
    ),
  ];
}

/** The pod specs a defaultResources entry defaults: a Pod's `spec`, each workload kind's template's. */
const POD_SPEC_PATHS: ReadonlyArray<{ kinds: string[]; path: readonly string[] }> = [
  { kinds: ['Pod'], path: ['spec'] },
  ...Object.entries(
    Object.entries(POD_TEMPLATE_PATHS).reduce<Record<string, string[]>>((byPath, [kind, path]) => {
      (byPath[[...path, 'spec'].join('.')] ??= []).push(kind);
      return byPath;
    }, {}),
  ).map(([path, kinds]) => ({ kinds, path: path.split('.') })),
];

/**
 * The ApplyConfiguration that sets one resource field (requests or limits, cpu or memory) to
 * `value` in the containers of one list (containers or initContainers) of one pod spec path where
 * `needs` (a CEL condition on the container `c`) holds, for the kinds that keep their pod spec
 * there; an empty Object{} (nothing to merge) for any other object.
 */
function resourceApplyExpression(kinds: readonly string[], path: readonly string[], list: string, field: 'requests' | 'limits', resource: string, value: string, needs: string): string {
  const typeName = (depth: number): string => ['Object', ...path.slice(0, depth)].join('.');
  const listPath = `object.${[...path, list].join('.')}`;
  const itemType = `${typeName(path.length)}.${list}`;
  const item = `${itemType}{name: c.name, resources: ${itemType}.resources{${field}: {${celString(resource)}: ${celString(value)}}}}`;
  let body = `${listPath}.filter(c, ${needs}).map(c, ${item})`;
  body = `${list}: ${body}`;
  for (let depth = path.length; depth > 0; depth -= 1) body = `${path[depth - 1]}: ${typeName(depth)}{${body}}`;
  const guard = `object.kind ${kinds.length === 1 ? `== ${celString(kinds[0]!)}` : `in [${kinds.map(celString).join(', ')}]`} && has(${listPath})`;
  return `${guard} ? Object{${body}} : Object{}`;
}

/**
 * The mutations of a defaultResources entry, applyDefaultResources' result: for each pod spec
 * path, each of containers and initContainers (ephemeral containers take no resources), each of
 * cpu and memory, first the request where the container has neither a request nor a limit for it
 * (a limit set by the user leaves the request to kube-apiserver's defaulting), then the limit
 * where it has none and its request is not above the default limit (which would make it invalid).
 * Kubernetes' `quantity()` library compares them.
 */
export function defaultResourcesMutations(source: Extract<NativeMutationSource, { kind: 'defaultResources' }>): Array<{ patchType: 'ApplyConfiguration'; applyConfiguration: { expression: string } }> {
  const mutations: string[] = [];
  const has = (field: string, resource: string): string => `(has(c.resources) && has(c.resources.${field}) && ${celString(resource)} in c.resources.${field})`;
  for (const { kinds, path } of POD_SPEC_PATHS) {
    for (const list of ['containers', 'initContainers']) {
      for (const resource of ['cpu', 'memory'] as const) {
        const request = source.requests[resource];
        const limit = source.limits[resource];
        if (request !== undefined) mutations.push(resourceApplyExpression(kinds, path, list, 'requests', resource, request, `!${has('requests', resource)} && !${has('limits', resource)}`));
        if (limit !== undefined) {
          const requested = `c.resources.requests[${celString(resource)}]`;
          const above = `(${has('requests', resource)} && isQuantity(${requested}) && quantity(${requested}).compareTo(quantity(${celString(limit)})) > 0)`;
          mutations.push(resourceApplyExpression(kinds, path, list, 'limits', resource, limit, `!${has('limits', resource)} && !${above}`));
        }
      }
    }
  }
  return mutations.map((expression) => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } }));
}

/** The JSONPatch expression of a defaultLabels entry. */
export function defaultLabelsExpression(source: Extract<NativeMutationSource, { kind: 'defaultLabels' }>): string {
  return [...fillAbsentExpression('labels', source.labels), ...fillAbsentExpression('annotations', source.annotations)].join(' +\n');
}
