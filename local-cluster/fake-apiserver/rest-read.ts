/** GET and LIST, with label and field selectors and the negotiated format (object, Table, metadata). */
import { asServedVersion } from './custom-resource-types.js';
import { parseSelectorQuery, selectorMatches } from './label-selector.js';
import type { KubeObject } from './objects.js';
import { fail, type ApiRequest, type Reply, type RestContext } from './rest-common.js';
import { apiVersionOf, type ResourceType } from './resources.js';
import { badRequest, notFound } from './status.js';
import { page } from './list-paging.js';
import { formatObject, readFormat, toPartialMetadataList, toTable, type ListMeta } from './tables.js';

const BASE_FIELDS: Readonly<Record<string, (object: KubeObject) => string>> = {
  'metadata.name': (o) => String(o.metadata?.name ?? ''),
  'metadata.namespace': (o) => String(o.metadata?.namespace ?? ''),
};

/** `labelSelector`, and `fieldSelector` on metadata.name, metadata.namespace and the type's own field labels. */
export function objectFilter(type: ResourceType, query: URLSearchParams): ((object: KubeObject) => boolean) | Reply {
  const labelText = query.get('labelSelector');
  const selector = labelText ? parseSelectorQuery(labelText) : undefined;
  if (labelText && !selector) return fail(badRequest(`unable to parse requirement: ${labelText}`));
  const fields = { ...BASE_FIELDS, ...(type.fieldLabels ?? {}) };
  const fieldChecks: ((object: KubeObject) => boolean)[] = [];
  for (const part of (query.get('fieldSelector') ?? '').split(',').filter((p) => p !== '')) {
    const m = part.match(/^([^=!]+)(==|=|!=)(.*)$/);
    const read = m ? fields[m[1] ?? ''] : undefined;
    if (!m || !read) {
      const label = m?.[1] ?? part;
      return fail(badRequest(`field label not supported: ${label}`));
    }
    const negate = m[2] === '!=';
    const value = m[3] ?? '';
    fieldChecks.push((object) => (read(object) === value) !== negate);
  }
  return (object) =>
    (selector === undefined || selectorMatches(selector, object.metadata?.labels ?? {})) && fieldChecks.every((check) => check(object));
}

export function handleGet(ctx: RestContext, request: ApiRequest): Reply {
  const { type, namespace, name } = request.target;
  const object = ctx.store.get(type.key, namespace, name ?? '');
  if (!object) return fail(notFound(type, name ?? ''));
  return { status: 200, body: formatObject(type, asServedVersion(type, object), readFormat(request.accept), request.query) };
}

export function handleList(ctx: RestContext, request: ApiRequest): Reply {
  const { type, namespace } = request.target;
  const filter = objectFilter(type, request.query);
  if (typeof filter !== 'function') return filter;
  const paged = page(ctx.store.list(type.key, namespace).filter(filter), request.query);
  if (!('items' in paged)) return paged;
  const items = paged.items.map((item) => asServedVersion(type, item));
  const listMeta: ListMeta = { resourceVersion: String(ctx.store.currentRevision) };
  if (paged.continue) {
    listMeta.continue = paged.continue;
    listMeta.remainingItemCount = paged.remainingItemCount;
  }
  const format = readFormat(request.accept);
  if (format.as === 'Table') {
    return { status: 200, body: toTable(type, items, { version: format.version, includeObject: request.query.get('includeObject') ?? 'Metadata', listMeta }) };
  }
  if (format.as === 'PartialObjectMetadata') return { status: 200, body: toPartialMetadataList(items, format.version, listMeta) };
  for (const item of items) {
    // Items of a typed list carry no apiVersion/kind of their own; custom resources keep theirs.
    if (type.custom) continue;
    delete item.apiVersion;
    delete item.kind;
  }
  return {
    status: 200,
    body: { kind: type.listKind ?? `${type.kind}List`, apiVersion: apiVersionOf(type), metadata: listMeta, items },
  };
}
