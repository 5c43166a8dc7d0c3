/**
 * What apiextensions-apiserver does to a custom resource with its version's structural schema
 * before it validates it (schemaCoercingDecoder, unstructuredDefaulter): ObjectMeta's unknown
 * fields dropped, unknown fields pruned (pruning/algorithm.go), nulls a schema does not allow
 * removed (defaulting/prunenulls.go), then defaults filled in (defaulting/algorithm.go). The
 * paths of what was pruned are what strict field validation reports.
 */
import { isDeepStrictEqual } from 'node:util';
import { clone, isRecord } from './objects.js';

/** An openAPIV3Schema node as the CRD carries it. */
export type JsonSchema = Readonly<Record<string, unknown>>;

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** metav1.ObjectMeta's JSON fields: anything else in `metadata` is unknown and dropped. */
const OBJECT_META_FIELDS = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp',
  'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
]);

export const propertiesOf = (schema: JsonSchema | undefined): Readonly<Record<string, JsonSchema>> =>
  (isRecord(schema?.properties) ? schema.properties : {}) as Record<string, JsonSchema>;

export const itemsOf = (schema: JsonSchema | undefined): JsonSchema | undefined => (isRecord(schema?.items) ? schema.items : undefined);

/**
 * The schema for a map's other keys: a schema, `true` (NewStructural keeps it as a schema-less
 * additionalProperties, which prunes whatever is nested), or absent (no other keys allowed).
 */
function additionalOf(schema: JsonSchema | undefined): { schema: JsonSchema | undefined } | undefined {
  const extra = schema?.additionalProperties;
  if (isRecord(extra)) return { schema: extra };
  if (extra === true) return { schema: undefined };
  return undefined;
}

/** The schema of a map's key: its property, else additionalProperties; undefined when the key is unknown. */
export function fieldSchema(schema: JsonSchema | undefined, key: string): { schema: JsonSchema | undefined } | undefined {
  const property = propertiesOf(schema)[key];
  if (property) return { schema: property };
  return additionalOf(schema);
}

const preserves = (schema: JsonSchema | undefined): boolean => schema?.['x-kubernetes-preserve-unknown-fields'] === true;
const embedded = (schema: JsonSchema | undefined): boolean => schema?.['x-kubernetes-embedded-resource'] === true;

const child = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** Removes what the schema does not know; returns the removed fields' paths, sorted (PruneWithOptions). */
export function prune(object: Record<string, unknown>, schema: JsonSchema | undefined): string[] {
  const unknown: string[] = [];
  pruneValue(object, schema, '', true, unknown);
  return unknown.sort();
}

function pruneValue(value: unknown, schema: JsonSchema | undefined, path: string, resourceRoot: boolean, unknown: string[]): void {
  if (preserves(schema)) return keepUnknown(value, schema, path, resourceRoot, unknown);
  if (Array.isArray(value)) {
    value.forEach((item, index) => pruneValue(item, schema ? itemsOf(schema) : undefined, `${path}[${index}]`, false, unknown));
    return;
  }
  if (!isRecord(value)) return;
  for (const key of Object.keys(value)) {
    // A resource's root (and an embedded resource) keeps apiVersion, kind and metadata whatever the schema says.
    if ((resourceRoot || embedded(schema)) && META_FIELDS.has(key)) continue;
    const known = schema ? fieldSchema(schema, key) : undefined;
    if (known) {
      pruneValue(value[key], known.schema, child(path, key), false, unknown);
      continue;
    }
    unknown.push(child(path, key));
    delete value[key];
  }
}

/** x-kubernetes-preserve-unknown-fields: unknown keys stay, known ones are still pruned inside. */
function keepUnknown(value: unknown, schema: JsonSchema | undefined, path: string, resourceRoot: boolean, unknown: string[]): void {
  if (schema === undefined) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => keepUnknown(item, itemsOf(schema), `${path}[${index}]`, false, unknown));
    return;
  }
  if (!isRecord(value)) return;
  for (const key of Object.keys(value)) {
    if ((resourceRoot || embedded(schema)) && META_FIELDS.has(key)) continue;
    const known = fieldSchema(schema, key);
    if (known) pruneValue(value[key], known.schema, child(path, key), false, unknown);
  }
}

const nullable = (schema: JsonSchema | undefined): boolean => schema?.nullable === true;
const hasDefault = (schema: JsonSchema | undefined): boolean => schema !== undefined && schema.default !== undefined;

/** PruneNonNullableNullsWithoutDefaults: `key: null` goes where the schema neither allows null nor has a default. */
export function pruneNulls(value: unknown, schema: JsonSchema | undefined): void {
  if (Array.isArray(value)) {
    for (const item of value) pruneNulls(item, itemsOf(schema));
    return;
  }
  if (!isRecord(value)) return;
  for (const key of Object.keys(value)) {
    const keySchema = schema === undefined ? undefined : fieldSchema(schema, key)?.schema;
    if (value[key] === null && keySchema !== undefined && !nullable(keySchema) && !hasDefault(keySchema)) delete value[key];
    else pruneNulls(value[key], keySchema);
  }
}

/** structuraldefaulting.Default: a property's default where it is missing, or null and not nullable. */
export function applyDefaults(value: unknown, schema: JsonSchema | undefined): void {
  if (schema === undefined) return;
  if (Array.isArray(value)) {
    const items = itemsOf(schema);
    value.forEach((item, index) => {
      if (item === null && items !== undefined && !nullable(items) && hasDefault(items)) value[index] = clone(items.default);
      applyDefaults(value[index], items);
    });
    return;
  }
  if (!isRecord(value)) return;
  for (const [key, property] of Object.entries(propertiesOf(schema))) {
    if (!hasDefault(property)) continue;
    if (!(key in value) || (value[key] === null && !nullable(property))) value[key] = clone(property.default);
  }
  const extra = additionalOf(schema)?.schema;
  for (const key of Object.keys(value)) {
    const property = propertiesOf(schema)[key];
    if (property) applyDefaults(value[key], property);
    else if (extra !== undefined) {
      if (value[key] === null && !nullable(extra) && hasDefault(extra)) value[key] = clone(extra.default);
      applyDefaults(value[key], extra);
    }
  }
}

/** ObjectMeta decoded strictly: the unknown keys of `metadata`, dropped, as `metadata.<key>`. */
export function dropUnknownMetadata(object: Record<string, unknown>): string[] {
  const meta = object.metadata;
  if (!isRecord(meta)) return [];
  const unknown = Object.keys(meta).filter((key) => !OBJECT_META_FIELDS.has(key));
  for (const key of unknown) delete meta[key];
  return unknown.map((key) => `metadata.${key}`);
}

/** Everything the decoder does to a custom resource, in its order; returns the unknown fields it dropped. */
export function coerceCustomResource(object: Record<string, unknown>, schema: JsonSchema | undefined): string[] {
  const unknown = [...dropUnknownMetadata(object), ...prune(object, schema)];
  pruneNulls(object, schema);
  applyDefaults(object, schema);
  return unknown;
}

/** What a write would lose, without changing it (strict and warn field validation). */
export function unknownFieldsOf(object: Record<string, unknown>, schema: JsonSchema | undefined): string[] {
  return coerceCustomResource(clone(object), schema);
}

export const sameValue = (a: unknown, b: unknown): boolean => isDeepStrictEqual(a, b);
