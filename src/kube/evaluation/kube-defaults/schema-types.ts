/**
 * The shape of the generated data file (scripts/kube-schema/generate.ts writes it from
 * Kubernetes' published OpenAPI v3 and its Go defaulters): what kube-apiserver does to an object
 * of a built-in kind between decoding the request body and calling the webhooks.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** How one field is typed: a primitive, a reference to a definition, a list or a map of them. */
export interface FieldSchema {
  /** string, integer, number, boolean, object, quantity, int-or-string, time, any. */
  t?: string;
  /** The definition (OpenAPI name) of an object field, or of a list's or map's items. */
  r?: string;
  /** A list's items. */
  i?: FieldSchema;
  /** A map's values. */
  m?: FieldSchema;
  /** The OpenAPI `default`: kube-apiserver writes it when the field is absent. */
  d?: JsonValue;
}

export interface TypeSchema {
  /** Fields by JSON name. */
  f: Record<string, FieldSchema>;
}

export type SchemaTypes = Record<string, TypeSchema>;

/** A field path relative to the object being defaulted (or to a list element inside `each`). */
export type Path = string[];

export type Cond =
  | { absent: Path }
  | { present: Path }
  | { zero: Path }
  | { nonzero: Path }
  | { truthy: Path }
  | { equals: Path; value: JsonValue }
  | { differs: Path; value: JsonValue }
  | { all: Cond[] }
  | { any: Cond[] };

export type DefaulterOp =
  | { set: Path; value: JsonValue; pending?: boolean }
  | { remove: Path }
  | { copy: Path; to: Path }
  | { if: Cond; then: DefaulterOp[]; else?: DefaulterOp[] }
  | { each: Path; do: DefaulterOp[] };

export interface KubeDefaultsData {
  /** The Kubernetes minor release the data describes, e.g. "1.35". */
  kubernetes: string;
  /** Where each part came from (files and commits), as the generator was told. */
  sources: Record<string, string>;
  /** `group/version/Kind` (core: `v1/Kind`) -> definition name. */
  kinds: Record<string, string>;
  types: SchemaTypes;
  /** Definition name -> its SetDefaults_ function, translated. */
  defaulters: Record<string, DefaulterOp[]>;
  /** Feature gates the defaulters test, with the state taken for this release. */
  featureGates: Record<string, boolean>;
  /** What the generator could not translate: applied by hand-written code or not at all (docs/policy.md says which). */
  untranslated: Array<{ function: string; statement: string; reason: string }>;
}
