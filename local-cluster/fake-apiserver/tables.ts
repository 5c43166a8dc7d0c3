/**
 * Content negotiation of reads (handlers/response.go): the plain object or list, a
 * meta.k8s.io Table (server-side printing, what `kubectl get` asks for), or
 * PartialObjectMetadata (what metadata-only clients ask for).
 */
import { DEFAULT_COLUMNS } from './printers.js';
import { apiVersionOf, type ColumnSpec, type ResourceType } from './resources.js';
import type { KubeObject } from './objects.js';

export type ReadFormat =
  | { as: 'object' }
  | { as: 'Table'; version: 'v1' | 'v1beta1' }
  | { as: 'PartialObjectMetadata'; version: 'v1' | 'v1beta1' };

/** The first media type of the Accept header the double can produce. */
export function readFormat(accept: string | undefined): ReadFormat {
  for (const entry of (accept ?? '').split(',')) {
    const [media, ...rawParams] = entry.split(';').map((part) => part.trim());
    const params = Object.fromEntries(rawParams.map((p) => p.split('=').map((s) => s.trim()) as [string, string]));
    if (media !== 'application/json' && media !== '*/*' && media !== 'application/*') continue;
    const as = params['as'];
    const version = params['v'] === 'v1beta1' ? 'v1beta1' : 'v1';
    if (as === undefined) return { as: 'object' };
    if (params['g'] !== 'meta.k8s.io') continue;
    if (as === 'Table') return { as: 'Table', version };
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { as: 'PartialObjectMetadata', version };
  }
  return { as: 'object' };
}

export function columnsOf(type: ResourceType): readonly ColumnSpec[] {
  return type.columns ?? DEFAULT_COLUMNS;
}

function partialMetadata(object: KubeObject, version: string): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: object.metadata ?? {} };
}

function rowObject(type: ResourceType, object: KubeObject, includeObject: string, version: string): KubeObject | undefined {
  if (includeObject === 'None') return undefined;
  if (includeObject === 'Object') return { apiVersion: apiVersionOf(type), kind: type.kind, ...object };
  return partialMetadata(object, version);
}

/** metav1.ListMeta: what every list answer carries. */
export type ListMeta = {
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
};

export interface TableOptions {
  version: 'v1' | 'v1beta1';
  /** includeObject: None, Metadata (default) or Object. */
  includeObject: string;
  /** Leave the column definitions out (watch events after the first). */
  noHeaders?: boolean;
  /** A list's metadata (resourceVersion, continue); a single object's Table has none. */
  listMeta?: ListMeta;
}

export function toTable(type: ResourceType, objects: readonly KubeObject[], options: TableOptions): KubeObject {
  const columns = columnsOf(type);
  const now = new Date();
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${options.version}`,
    metadata: options.listMeta ?? {},
    columnDefinitions: options.noHeaders
      ? []
      : columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 })),
    rows: objects.map((object) => {
      const row: Record<string, unknown> = { cells: columns.map((c) => c.cell(object, now)) };
      const embedded = rowObject(type, object, options.includeObject, options.version);
      if (embedded) row.object = embedded;
      return row;
    }),
  };
}

export function toPartialMetadataList(objects: readonly KubeObject[], version: string, listMeta: ListMeta): KubeObject {
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: listMeta,
    items: objects.map((o) => partialMetadata(o, version)),
  };
}

/** One object (a get, or a watch event) in the negotiated format. */
export function formatObject(type: ResourceType, object: KubeObject, format: ReadFormat, query: URLSearchParams, noHeaders = false): KubeObject {
  if (format.as === 'Table') {
    return toTable(type, [object], { version: format.version, includeObject: query.get('includeObject') ?? 'Metadata', noHeaders });
  }
  if (format.as === 'PartialObjectMetadata') return partialMetadata(object, format.version);
  return object;
}
