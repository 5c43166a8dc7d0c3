/** Maps request paths and methods onto resource types and Kubernetes verbs. */
import type { ResourceType, Verb } from './resources.js';
import type { TypeRegistry } from './type-registry.js';

export interface ApiTarget {
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
}

function coreOrGroup(segments: string[]): { group: string; version: string; rest: string[] } | undefined {
  if (segments[0] === 'api' && segments.length >= 2) {
    return { group: '', version: segments[1] ?? '', rest: segments.slice(2) };
  }
  if (segments[0] === 'apis' && segments.length >= 3) {
    return { group: segments[1] ?? '', version: segments[2] ?? '', rest: segments.slice(3) };
  }
  return undefined;
}

export function parseApiPath(pathname: string, types: TypeRegistry): ApiTarget | undefined {
  const segments = pathname.split('/').filter((s) => s !== '').map(decodeURIComponent);
  const parts = coreOrGroup(segments);
  if (!parts || parts.rest.length === 0) return undefined;
  const { group, version, rest } = parts;
  // namespaces/{ns}/{resource}/... addresses a namespaced resource when {resource} is one;
  // otherwise namespaces/{name}/{subresource} is the Namespace's own subresource.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const type = types.find(group, version, rest[2] ?? '');
    if (type?.namespaced) {
      if (rest.length > 5) return undefined;
      return { type, namespace: rest[1], name: rest[3], subresource: rest[4] };
    }
  }
  const type = types.find(group, version, rest[0] ?? '');
  if (!type || rest.length > 3) return undefined;
  if (type.namespaced && rest.length > 1) return undefined; // named access needs a namespace
  return { type, name: rest[1], subresource: rest[2] };
}

export function verbOf(method: string, target: ApiTarget, watch: boolean): Verb | 'deletecollection' | undefined {
  const named = target.name !== undefined;
  switch (method) {
    case 'GET':
      if (watch) return 'watch';
      return named ? 'get' : 'list';
    case 'POST':
      // A named POST only creates a subresource (pods/<name>/binding).
      if (named) return target.subresource === undefined ? undefined : 'create';
      return 'create';
    case 'PUT':
      return named ? 'update' : undefined;
    case 'PATCH':
      return named ? 'patch' : undefined;
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return undefined;
  }
}
