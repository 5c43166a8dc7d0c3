/** A CustomResourceDefinition (apiextensions.k8s.io/v1) read into the shape the double works with. */
import { isRecord, type KubeObject } from './objects.js';
import type { JsonSchema } from './crd-schema.js';

type Json = Record<string, unknown>;

const rec = (value: unknown): Json => (isRecord(value) ? value : {});
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

export interface CrdNames {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
  schema?: JsonSchema;
  subresources: Json;
  columns: Json[];
}

export interface CrdSpec {
  group: string;
  scope: string;
  names: CrdNames;
  versions: CrdVersion[];
}

export function namesOf(value: unknown): CrdNames {
  const names = rec(value);
  return {
    plural: str(names.plural),
    singular: str(names.singular),
    kind: str(names.kind),
    listKind: str(names.listKind),
    shortNames: strings(names.shortNames),
    categories: strings(names.categories),
  };
}

function versionOf(value: Json): CrdVersion {
  const schema = rec(value.schema).openAPIV3Schema;
  return {
    name: str(value.name),
    served: value.served === true,
    storage: value.storage === true,
    deprecated: value.deprecated === true,
    deprecationWarning: typeof value.deprecationWarning === 'string' ? value.deprecationWarning : undefined,
    schema: isRecord(schema) ? schema : undefined,
    subresources: rec(value.subresources),
    columns: Array.isArray(value.additionalPrinterColumns) ? value.additionalPrinterColumns.filter(isRecord) : [],
  };
}

export function crdSpec(crd: KubeObject): CrdSpec {
  const spec = rec(crd.spec);
  return {
    group: str(spec.group),
    scope: str(spec.scope),
    names: namesOf(spec.names),
    versions: Array.isArray(spec.versions) ? spec.versions.filter(isRecord).map(versionOf) : [],
  };
}

export interface CrdCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export function conditionsOf(crd: KubeObject): CrdCondition[] {
  const conditions = rec(crd.status).conditions;
  return Array.isArray(conditions) ? conditions.filter(isRecord).map((c) => ({ ...c, type: str(c.type), status: str(c.status) })) : [];
}

export function conditionOf(crd: KubeObject, type: string): CrdCondition | undefined {
  return conditionsOf(crd).find((condition) => condition.type === type);
}

export const isConditionTrue = (crd: KubeObject, type: string): boolean => conditionOf(crd, type)?.status === 'True';

export const storedVersionsOf = (crd: KubeObject): string[] => strings(rec(crd.status).storedVersions);

/** The accepted names of the status (what is served), as the naming controller recorded them. */
export const acceptedNamesOf = (crd: KubeObject): CrdNames => namesOf(rec(crd.status).acceptedNames);

export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
