/**
 * An object as kube-apiserver holds it once it decoded and defaulted the request body, before
 * any webhook sees it: explicit nulls gone (a null field decodes to nothing, a null map value to
 * ""), quantities as strings, the OpenAPI defaults of the built-in kinds written (the zero values
 * Go always serializes among them: `status: {}`, `resources: {}`), then the Go defaulters
 * (`replicas: 1`, `dnsPolicy: ClusterFirst`, ...). The rules come from the generated data file
 * (scripts/kube-schema/generate.ts); kinds it does not know (custom resources) only lose their nulls.
 */
import { copyObject } from '../../../admission/patch.js';
import data from './kubernetes-1.35.json' with { type: 'json' };
import { procedural } from './procedural.js';
import { clone, isObject, runDefaulter, type JsonObject } from './run-defaulter.js';
import type { FieldSchema, JsonValue, KubeDefaultsData } from './schema-types.js';

const DEFAULTS = data as unknown as KubeDefaultsData;

/** The Kubernetes release whose published OpenAPI and defaulters the tools apply. */
export const DEFAULTS_KUBERNETES_VERSION = DEFAULTS.kubernetes;

/** A value decoded as its field's type: nulls dropped, quantities as strings, defaults applied below. */
function decode(value: JsonValue, schema: FieldSchema): JsonValue | undefined {
  if (value === null) return schema.d !== undefined ? decode(clone(schema.d), schema) : undefined;
  if (schema.t === 'quantity' && typeof value === 'number') return String(value);
  if (schema.r && isObject(value)) return decodeObject(value, schema.r);
  if (schema.i && Array.isArray(value)) return value.map((item) => decode(item, schema.i!) ?? (schema.i!.r ? decodeObject({}, schema.i!.r) : '')).filter((item) => item !== undefined);
  if (schema.m && isObject(value)) {
    const decoded: JsonObject = {};
    for (const [key, entry] of Object.entries(value)) {
      // Go decodes a null map value to the type's zero value: "" for map[string]string.
      const item = entry === null && (schema.m.t === 'string' || schema.m.t === 'quantity') ? '' : decode(entry, schema.m);
      if (item !== undefined) decoded[key] = item;
    }
    return decoded;
  }
  if (schema.t === 'any') return dropNulls(value);
  return value;
}

/** What decoding one definition needs, looked up once: its fields, those with a default, its defaulters. */
interface Decoder {
  fields: Record<string, FieldSchema>;
  defaults: Array<[string, JsonValue]>;
  run: ((object: JsonObject) => void) | undefined;
}

const decoders = new Map<string, Decoder | null>();

function decoderOf(definition: string): Decoder | null {
  let decoder = decoders.get(definition);
  if (decoder !== undefined) return decoder;
  const type = DEFAULTS.types[definition];
  const ops = DEFAULTS.defaulters[definition];
  const hand = procedural[definition];
  decoder = type
    ? {
        fields: type.f,
        defaults: Object.entries(type.f).flatMap(([key, field]) => (field.d === undefined ? [] : [[key, field.d] as [string, JsonValue]])),
        run:
          ops || hand
            ? (object) => {
                if (ops) runDefaulter(object, ops);
                hand?.(object);
              }
            : undefined,
      }
    : null;
  decoders.set(definition, decoder);
  return decoder;
}

function decodeObject(object: JsonObject, definition: string): JsonObject {
  const decoder = decoderOf(definition);
  if (!decoder) return dropNulls(object) as JsonObject;
  for (const key in object) if (object[key] === null) delete object[key];
  for (const [key, value] of decoder.defaults) if (object[key] === undefined) object[key] = clone(value);
  decoder.run?.(object);
  for (const key in object) {
    const field = decoder.fields[key];
    if (!field) continue;
    const decoded = decode(object[key]!, field);
    if (decoded === undefined) delete object[key];
    else object[key] = decoded;
  }
  return object;
}

/** Nulls dropped at every level, for what no schema describes (custom resources, free-form fields). */
export function dropNulls(value: JsonValue): JsonValue | undefined {
  if (value === null) return undefined;
  if (Array.isArray(value)) return value.map(dropNulls).filter((item): item is JsonValue => item !== undefined);
  if (!isObject(value)) return value;
  const kept: JsonObject = {};
  for (const [key, entry] of Object.entries(value)) {
    const decoded = dropNulls(entry);
    if (decoded !== undefined) kept[key] = decoded;
  }
  return kept;
}

/** The definition of a built-in kind, or undefined (custom resources, kinds of other groups). */
export function definitionOfKind(apiVersion: string, kind: string): string | undefined {
  return DEFAULTS.kinds[`${apiVersion}/${kind}`];
}

/**
 * `object` as kube-apiserver would hand it to the webhooks after decoding and defaulting it (a
 * new object; the argument is not changed).
 */
export function asDecodedByKubeApiserver<T extends object>(object: T): T {
  return decodedInPlace(copyObject(object));
}

/**
 * asDecodedByKubeApiserver() for an object the caller owns (a fresh copy, such as a patch's
 * result): decoded and defaulted in place, without another deep copy.
 */
export function decodedInPlace<T extends object>(object: T): T {
  const copy = object as unknown as JsonObject;
  const apiVersion = typeof copy['apiVersion'] === 'string' ? copy['apiVersion'] : '';
  const kind = typeof copy['kind'] === 'string' ? copy['kind'] : '';
  const definition = definitionOfKind(apiVersion, kind);
  return (definition ? decodeObject(copy, definition) : dropNulls(copy)) as unknown as T;
}
