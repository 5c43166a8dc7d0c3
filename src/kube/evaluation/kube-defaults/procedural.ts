/**
 * The Go defaulters the generator cannot translate into data (they call functions or loop over
 * maps; kubernetes-1.35.json lists them under `untranslated`), for the ones a policy is likely to
 * read. Each follows kubernetes/kubernetes pkg/apis/core/v1/defaults.go of that release; the rest
 * of the untranslated list is not applied (docs/policy.md names them).
 */
import data from './kubernetes-1.35.json' with { type: 'json' };
import { isObject, runDefaulter, type JsonObject } from './run-defaulter.js';
import type { DefaulterOp, JsonValue } from './schema-types.js';

/**
 * The tag parsers.ParseImageName finds: the reference's tag, "latest" when it has neither tag
 * nor digest, "" when it cannot be parsed (then the policy is IfNotPresent, as in Go).
 */
export function imageTag(image: string): string {
  if (image === '' || /\s/.test(image) || image !== image.trim()) return '';
  const [name = '', digest] = image.split('@');
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  const tag = colon >= 0 ? lastSegment.slice(colon + 1) : '';
  if (colon >= 0 && !/^[\w][\w.-]{0,127}$/.test(tag)) return '';
  if (tag === '' && digest === undefined) return 'latest';
  return tag;
}

/** SetDefaults_Container's image pull policy: Always for :latest (or no tag), else IfNotPresent. */
function defaultContainer(container: JsonObject): void {
  if (container['imagePullPolicy'] === undefined || container['imagePullPolicy'] === '') {
    const image = typeof container['image'] === 'string' ? container['image'] : '';
    container['imagePullPolicy'] = imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
  }
}

/** SetDefaults_Pod: a container with limits and no request for a resource requests its limit. */
function requestsFromLimits(containers: JsonValue | undefined): void {
  if (!Array.isArray(containers)) return;
  for (const container of containers) {
    const resources = isObject(container) ? container['resources'] : undefined;
    if (!isObject(resources) || !isObject(resources['limits'])) continue;
    const requests = isObject(resources['requests']) ? resources['requests'] : (resources['requests'] = {});
    for (const [name, limit] of Object.entries(resources['limits'])) if (!(name in requests)) requests[name] = limit;
  }
}

const CONTAINER_OPS = ((data as unknown as { defaulters: Record<string, DefaulterOp[]> }).defaulters['io.k8s.api.core.v1.Container'] ?? []);

/** Definition name -> the hand-carried part of its defaulter, run after the translated one. */
export const procedural: Record<string, (object: JsonObject) => void> = {
  'io.k8s.api.core.v1.Container': defaultContainer,
  // SetDefaults_EphemeralContainer runs SetDefaults_Container on the container's common fields.
  'io.k8s.api.core.v1.EphemeralContainer': (container) => {
    runDefaulter(container, CONTAINER_OPS);
    defaultContainer(container);
  },
  'io.k8s.api.core.v1.Pod': (pod) => {
    const spec = pod['spec'];
    if (!isObject(spec)) return;
    requestsFromLimits(spec['containers']);
    requestsFromLimits(spec['initContainers']);
  },
};
