/**
 * The non-resource paths kubectl reads before anything else: /version, legacy discovery (/api,
 * /apis, each group and group-version's resource list) and the OpenAPI v3 index with one
 * document per group-version. The OpenAPI documents carry only what kubectl looks for in them:
 * the PATCH operation of each kind with its `fieldValidation` parameter, which tells kubectl
 * that the server validates fields itself (then `kubectl apply` sends fieldValidation=Strict
 * instead of validating against a schema it would have to download). Without schemas, kubectl
 * computes strategic merge patches from its own compiled-in types, as it does for any server.
 * /openapi/v2 is a document with no definitions (see openApiV2).
 */
import { createHash } from 'node:crypto';
import type { Reply } from './rest-common.js';
import { apiVersionOf, type ResourceType } from './resources.js';
import { byKubeAwarePriority } from './kube-versions.js';
import type { TypeRegistry } from './type-registry.js';
import { versionInfo } from './version-info.js';

/** What a discovery answer depends on besides the path. */
export interface DiscoveryContext {
  types: TypeRegistry;
  /** host:port, as /api advertises it. */
  serverAddress: string;
  /** The gitVersion /version and the OpenAPI documents report. */
  version: string;
  accept?: string;
}

const groupVersionOf = (type: ResourceType): string => apiVersionOf(type);

/** Verbs in discovery's order (sorted), as kube-apiserver lists them. */
const sortedVerbs = (verbs: readonly string[]): string[] => [...verbs].sort();

/** Of the version objects are stored in: every served version of a CRD has the same. */
function storageVersionHash(type: ResourceType): string {
  const stored = type.custom?.storageVersion ?? type.version;
  return createHash('sha256').update(`${type.group}/${stored}/${type.kind}`).digest('base64').slice(0, 12);
}

const SUBRESOURCE_VERBS: Readonly<Record<string, string[]>> = {
  status: ['get', 'patch', 'update'],
  scale: ['get', 'patch', 'update'],
  log: ['get'],
  finalize: ['update'],
  binding: ['create'],
  eviction: ['create'],
};

/** Subresources whose kind is not the resource's own (kube-apiserver's discovery names them). */
const SUBRESOURCE_KINDS: Readonly<Record<string, Record<string, string>>> = {
  scale: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
  binding: { kind: 'Binding' },
  eviction: { group: 'policy', version: 'v1', kind: 'Eviction' },
};

function resourceEntries(type: ResourceType): Record<string, unknown>[] {
  const main: Record<string, unknown> = {
    name: type.resource,
    singularName: type.singular,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: sortedVerbs(type.verbs),
  };
  if (type.shortNames.length > 0) main.shortNames = [...type.shortNames];
  if (type.categories.length > 0) main.categories = [...type.categories];
  main.storageVersionHash = storageVersionHash(type);
  const subresources = type.subresources.map((sub) => ({
    name: `${type.resource}/${sub}`,
    singularName: '',
    namespaced: type.namespaced,
    ...(SUBRESOURCE_KINDS[sub] ?? { kind: type.kind }),
    verbs: SUBRESOURCE_VERBS[sub] ?? ['get'],
  }));
  return [main, ...subresources];
}

interface GroupInfo {
  name: string;
  versions: string[];
}

function groups(types: TypeRegistry): GroupInfo[] {
  const byName = new Map<string, Set<string>>();
  for (const type of types.served()) {
    if (type.group === '') continue;
    const versions = byName.get(type.group) ?? new Set<string>();
    versions.add(type.version);
    byName.set(type.group, versions);
  }
  return [...byName.entries()].map(([name, versions]) => ({ name, versions: [...versions].sort(byKubeAwarePriority) }));
}

function apiGroup(group: GroupInfo): Record<string, unknown> {
  const versions = group.versions.map((version) => ({ groupVersion: `${group.name}/${version}`, version }));
  return { name: group.name, versions, preferredVersion: versions[0] };
}

function resourceList(types: TypeRegistry, group: string, version: string): Reply {
  const members = types.served().filter((t) => t.group === group && t.version === version);
  if (members.length === 0) return notFoundPath();
  const groupVersion = group === '' ? version : `${group}/${version}`;
  return {
    status: 200,
    body: { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: members.flatMap(resourceEntries) },
  };
}

function notFoundPath(): Reply {
  return {
    status: 404,
    body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 },
  };
}

/** The OpenAPI v3 path of a type's named object, as kube-apiserver publishes it. */
function objectPath(type: ResourceType): string {
  const prefix = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  return type.namespaced ? `${prefix}/namespaces/{namespace}/${type.resource}/{name}` : `${prefix}/${type.resource}/{name}`;
}

const openApiKey = (groupVersion: string): string => (groupVersion.includes('/') ? `apis/${groupVersion}` : `api/${groupVersion}`);

function openApiDocument(types: TypeRegistry, groupVersion: string, version: string): Record<string, unknown> {
  const members = types.served().filter((t) => groupVersionOf(t) === groupVersion);
  const paths: Record<string, unknown> = {};
  for (const type of members) {
    paths[objectPath(type)] = {
      patch: {
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group: type.group, version: type.version, kind: type.kind },
        parameters: [
          { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'force', in: 'query', schema: { type: 'boolean', uniqueItems: true } },
        ],
        requestBody: {
          content: {
            'application/apply-patch+yaml': { schema: { type: 'object' } },
            'application/json-patch+json': { schema: { type: 'object' } },
            'application/merge-patch+json': { schema: { type: 'object' } },
          },
        },
      },
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version }, paths, components: { schemas: {} } };
}

function openApiIndex(types: TypeRegistry, version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const groupVersion of new Set(types.served().map(groupVersionOf))) {
    const hash = createHash('sha512').update(JSON.stringify(openApiDocument(types, groupVersion, version))).digest('hex').slice(0, 128).toUpperCase();
    paths[openApiKey(groupVersion)] = { serverRelativeURL: `/openapi/v3/${openApiKey(groupVersion)}?hash=${hash}` };
  }
  return { paths };
}

const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
/** What kube-openapi answers with: the same type with a dot for the `@` that Go's mime parser refuses. */
const OPENAPI_V2_PROTOBUF_RETURNED = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** A protobuf length-delimited field (wire type 2). */
function protoField(field: number, bytes: Buffer): Buffer {
  return Buffer.concat([Buffer.from([(field << 3) | 2, bytes.length]), bytes]);
}

/**
 * The OpenAPI v2 document, without definitions: kubectl validates and patches built-in kinds
 * from v3 and its own types, and reads v2 only for kinds v3 does not describe (there it finds no
 * schema, as for any unknown kind, and leaves the answer to the server). Protobuf as kubectl asks
 * (gnostic Document{swagger: "2.0", info: {title, version}}), or JSON.
 */
function openApiV2(accept: string | undefined, version: string): Reply {
  const title = 'Kubernetes';
  if ((accept ?? '').includes(OPENAPI_V2_PROTOBUF) || (accept ?? '').includes(OPENAPI_V2_PROTOBUF_RETURNED)) {
    const info = Buffer.concat([protoField(1, Buffer.from(title)), protoField(2, Buffer.from(version))]);
    return { status: 200, body: undefined, raw: { contentType: OPENAPI_V2_PROTOBUF_RETURNED, body: Buffer.concat([protoField(1, Buffer.from('2.0')), protoField(2, info)]) } };
  }
  return { status: 200, body: { swagger: '2.0', info: { title, version }, paths: {}, definitions: {} } };
}

/** Answers a discovery or OpenAPI path; undefined for anything else. */
export function discoveryReply(pathname: string, { types, serverAddress, version, accept }: DiscoveryContext): Reply | undefined {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/version') return { status: 200, body: versionInfo(version) };
  if (path === '/api') {
    return { status: 200, body: { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] } };
  }
  if (path === '/apis') {
    return { status: 200, body: { kind: 'APIGroupList', apiVersion: 'v1', groups: groups(types).map(apiGroup) } };
  }
  if (path === '/api/v1') return resourceList(types, '', 'v1');
  if (path === '/openapi/v3') return { status: 200, body: openApiIndex(types, version) };
  if (path === '/openapi/v2') return openApiV2(accept, version);
  const openApi = /^\/openapi\/v3\/(api\/v1|apis\/[^/]+\/[^/]+)$/.exec(path);
  if (openApi) {
    const groupVersion = (openApi[1] ?? '').replace(/^apis?\//, '');
    return types.served().some((t) => groupVersionOf(t) === groupVersion) ? { status: 200, body: openApiDocument(types, groupVersion, version) } : notFoundPath();
  }
  const segments = path.split('/').filter((s) => s !== '');
  if (segments[0] === 'apis' && segments.length === 2) {
    const group = groups(types).find((g) => g.name === segments[1]);
    return group ? { status: 200, body: { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group) } } : notFoundPath();
  }
  if (segments[0] === 'apis' && segments.length === 3) return resourceList(types, segments[1] ?? '', segments[2] ?? '');
  return undefined;
}
