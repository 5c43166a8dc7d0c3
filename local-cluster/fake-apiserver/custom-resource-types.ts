/**
 * A CustomResourceDefinition as the resource types it adds: one per served version, with the
 * names the naming controller accepted, the version's printer columns, subresources and schema
 * (pruning, defaults and validation on every write), and the storage version's type, under which
 * the store keeps every object of the CRD whichever version wrote it. Versions convert as the
 * `None` strategy does: only apiVersion changes.
 */
import { isDeepStrictEqual } from 'node:util';
import { acceptedNamesOf, crdSpec, isConditionTrue, conditionOf, type CrdSpec, type CrdVersion } from './crd-object.js';
import { coerceCustomResource } from './crd-schema.js';
import { validateAgainstSchema } from './crd-schema-validation.js';
import { validateObjectMeta } from './meta-validation.js';
import { isRecord, type KubeObject } from './objects.js';
import { compareKubeAwareVersions } from './kube-versions.js';
import { AGE_COLUMN, NAME_COLUMN, humanDuration } from './printers.js';
import { ALL_VERBS, apiVersionOf, type ColumnSpec, type CustomResourceInfo, type ResourceType } from './resources.js';

type Json = Record<string, unknown>;

const rec = (value: unknown): Json => (isRecord(value) ? value : {});

/** The subset of JSONPath that printer columns use: `.a.b`, `[0]`, `[?(@.type=="Ready")]`. */
export function evaluateJsonPath(object: unknown, path: string): unknown {
  const tokens = path.match(/\.[^.[\]]+|\[\?\(@\.[^=]+==["'][^"']*["']\)\]|\[\d+\]/g) ?? [];
  let current: unknown = object;
  for (const token of tokens) {
    if (current === undefined || current === null) return undefined;
    if (token.startsWith('.')) current = rec(current)[token.slice(1)];
    else if (token.startsWith('[?')) {
      const m = /^\[\?\(@\.([^=]+)==["']([^"']*)["']\)\]$/.exec(token);
      current = Array.isArray(current) ? current.find((item) => String(rec(item)[m?.[1] ?? '']) === m?.[2]) : undefined;
    } else current = Array.isArray(current) ? current[Number(token.slice(1, -1))] : undefined;
  }
  return current;
}

function printerColumn(definition: Json): ColumnSpec {
  const type = String(definition.type ?? 'string') as ColumnSpec['type'];
  const path = String(definition.jsonPath ?? '');
  return {
    name: String(definition.name ?? ''),
    type,
    format: typeof definition.format === 'string' ? definition.format : undefined,
    description: typeof definition.description === 'string' ? definition.description : undefined,
    priority: typeof definition.priority === 'number' ? definition.priority : 0,
    cell: (object, now) => cellForJsonValue(type, evaluateJsonPath(object, path), now),
  };
}

/** tableconvertor's cells: a value of another type than the column's is empty (nil); dates become ages; strings print any value. */
function cellForJsonValue(type: ColumnSpec['type'], value: unknown, now: Date): unknown {
  if (value === undefined || value === null) return null;
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : JSON.stringify(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      if (typeof value !== 'string') return null;
      return Number.isNaN(Date.parse(value)) ? '<invalid>' : humanDuration(now.getTime() - Date.parse(value));
  }
}

/**
 * customResourceStrategy.PrepareForUpdate: anything but metadata that changes bumps the
 * generation; with the status subresource, status never does (the main resource keeps the stored
 * status, and the status strategy leaves the generation alone).
 */
function contentChanged(withStatus: boolean): (old: KubeObject, next: KubeObject) => boolean {
  const content = ({ metadata: _metadata, status, ...rest }: KubeObject): KubeObject => (withStatus ? rest : { ...rest, status });
  return (old, next) => !isDeepStrictEqual(content(old), content(next));
}

/** defaultDeprecationWarning: the version is deprecated; use the highest served version above it that is not. */
function deprecationWarning(spec: CrdSpec, deprecated: string, kind: string): string {
  const message = `${spec.group}/${deprecated} ${kind} is deprecated`;
  const better = spec.versions
    .filter((v) => v.served && !v.deprecated && compareKubeAwareVersions(deprecated, v.name) < 0)
    .map((v) => v.name)
    .sort((a, b) => compareKubeAwareVersions(b, a));
  return better.length === 0 ? message : `${message}; use ${spec.group}/${better[0]} ${kind}`;
}

/** Ratcheting (CRDValidationRatcheting) is on by default from 1.30: unchanged values keep their errors to themselves. */
const RATCHETING_SINCE_MINOR = 30;

function versionType(crd: KubeObject, spec: CrdSpec, version: CrdVersion, storageVersion: string): ResourceType {
  const names = acceptedNamesOf(crd);
  const kind = names.kind || spec.names.kind;
  const subresources = version.subresources;
  const columns = version.columns.map(printerColumn);
  const scale = rec(subresources.scale);
  const established = conditionOf(crd, 'Established');
  const custom: CustomResourceInfo = {
    crd: crd.metadata?.name ?? '',
    uid: crd.metadata?.uid ?? '',
    storageVersion,
    schema: version.schema,
    establishedAt: established?.status === 'True' && established.lastTransitionTime ? Date.parse(established.lastTransitionTime) : undefined,
    terminating: crd.metadata?.deletionTimestamp !== undefined || isConditionTrue(crd, 'Terminating'),
    deprecationWarning: version.deprecated ? (version.deprecationWarning ?? deprecationWarning(spec, version.name, spec.names.kind)) : undefined,
  };
  return {
    key: `${spec.names.plural}.${spec.group}`,
    group: spec.group,
    version: version.name,
    resource: spec.names.plural,
    kind,
    listKind: names.listKind || spec.names.listKind || `${kind}List`,
    singular: names.singular || spec.names.singular || kind.toLowerCase(),
    shortNames: names.shortNames,
    categories: names.categories,
    namespaced: spec.scope !== 'Cluster',
    verbs: ALL_VERBS,
    nameRule: 'subdomain',
    allowUnconditionalUpdate: false,
    generationChanged: contentChanged(isRecord(subresources.status)),
    subresources: [...(isRecord(subresources.status) ? ['status'] : []), ...(isRecord(subresources.scale) ? ['scale'] : [])],
    ...(isRecord(subresources.scale)
      ? { scale: { specReplicasPath: String(scale.specReplicasPath ?? ''), statusReplicasPath: String(scale.statusReplicasPath ?? '') } }
      : {}),
    mergeKeys: {},
    columns: columns.length > 0 ? [NAME_COLUMN, ...columns] : [NAME_COLUMN, AGE_COLUMN],
    prepare: (object) => void coerceCustomResource(object, version.schema),
    validate: (object, old, served) => [
      ...validateObjectMeta(object.metadata ?? {}, 'subdomain'),
      ...validateAgainstSchema(object, version.schema, served.minor >= RATCHETING_SINCE_MINOR ? old : undefined),
    ],
    custom,
  };
}

const storageVersionOf = (spec: CrdSpec): CrdVersion | undefined => spec.versions.find((version) => version.storage);

/** The type the store keeps the CRD's objects under: its storage version (none for a CRD without one). */
export function storageType(crd: KubeObject): ResourceType | undefined {
  const spec = crdSpec(crd);
  const storage = storageVersionOf(spec);
  if (spec.group === '' || spec.names.plural === '' || !storage) return undefined;
  return versionType(crd, spec, storage, storage.name);
}

/**
 * What a kube-apiserver serves for the CRD as its cache holds it: every served version, once
 * the names are accepted or the CRD is Established (crdHandler.ServeHTTP), nothing otherwise.
 */
export function servedTypes(crd: KubeObject): ResourceType[] {
  if (!isConditionTrue(crd, 'NamesAccepted') && !isConditionTrue(crd, 'Established')) return [];
  const spec = crdSpec(crd);
  const storage = storageVersionOf(spec);
  if (spec.group === '' || spec.names.plural === '' || !storage) return [];
  return spec.versions.filter((version) => version.served).map((version) => versionType(crd, spec, version, storage.name));
}

/** An object read from the store as the version `type` serves (conversion strategy None). */
export function asServedVersion<T extends KubeObject | undefined>(type: ResourceType, object: T): T {
  if (!type.custom || object === undefined) return object;
  return { ...object, apiVersion: apiVersionOf(type) };
}
