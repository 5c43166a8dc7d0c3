/**
 * TypeScript types of a CRD's objects from its OpenAPI v3 schema (apiextensions.k8s.io/v1
 * structural schemas), with a `defineKind` per served version: what `kube-admission-server types
 * --crd FILE` writes, so that a webhook for custom resources is typed like one for Pods.
 */
import { ToolInputError } from './tool-io.js';

/** The parts of an OpenAPI v3 schema a structural CRD schema may use for types. */
interface Schema {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema | boolean;
  enum?: unknown[];
  nullable?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: Schema };
  subresources?: { status?: unknown; scale?: unknown };
}

interface Crd {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string };
  spec?: {
    group?: string;
    names?: { kind?: string; plural?: string };
    scope?: string;
    versions?: CrdVersion[];
  };
}

const INDENT = '  ';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function comment(description: string | undefined, indent: string): string[] {
  if (!description) return [];
  const text = description.replace(/\s+/g, ' ').trim().replace(/\*\//g, '*\\/');
  return [`${indent}/** ${text} */`];
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

function literal(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? JSON.stringify(value) : 'unknown';
}

const EMBEDDED = '{ apiVersion?: string; kind?: string; metadata?: k8s.V1ObjectMeta; [key: string]: unknown }';

/** The TypeScript type of `schema`, written at `indent`. */
function typeOf(schema: Schema | undefined, indent: string): string {
  if (!schema) return 'unknown';
  const base = baseTypeOf(schema, indent);
  return schema.nullable ? `${base} | null` : base;
}

function baseTypeOf(schema: Schema, indent: string): string {
  if (schema['x-kubernetes-int-or-string']) return 'number | string';
  if (schema['x-kubernetes-embedded-resource']) return EMBEDDED;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum.map(literal).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return `Array<${typeOf(schema.items, indent)}>`;
    case 'object':
      return objectType(schema, indent);
    default:
      return schema.properties ? objectType(schema, indent) : 'unknown';
  }
}

function objectType(schema: Schema, indent: string): string {
  const inner = indent + INDENT;
  const required = new Set(schema.required ?? []);
  const lines: string[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    lines.push(...comment(property.description, inner));
    lines.push(`${inner}${propertyKey(name)}${required.has(name) ? '' : '?'}: ${typeOf(property, inner)};`);
  }
  const extra = schema.additionalProperties;
  if (isRecord(extra) && !schema.properties) return `{ [key: string]: ${typeOf(extra as Schema, indent)} }`;
  if (extra === true || isRecord(extra) || schema['x-kubernetes-preserve-unknown-fields']) lines.push(`${inner}[key: string]: unknown;`);
  if (lines.length === 0) return '{}';
  return `{\n${lines.join('\n')}\n${indent}}`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** The CRD's fields types need; a ToolInputError naming what is missing otherwise. */
function checkedCrd(document: unknown, where: string): { crd: Required<NonNullable<Crd['spec']>>; kind: string; plural: string } {
  if (!isRecord(document) || document['kind'] !== 'CustomResourceDefinition') {
    throw new ToolInputError(`${where}: not a CustomResourceDefinition (kind: ${isRecord(document) ? String(document['kind']) : typeof document})`);
  }
  const crd = document as Crd;
  if (crd.apiVersion !== 'apiextensions.k8s.io/v1') throw new ToolInputError(`${where}: apiVersion must be apiextensions.k8s.io/v1 (v1beta1 was removed in Kubernetes 1.22)`);
  const spec = crd.spec;
  const kind = spec?.names?.kind;
  const plural = spec?.names?.plural;
  if (!spec?.group || !kind || !plural || !Array.isArray(spec.versions) || spec.versions.length === 0) {
    throw new ToolInputError(`${where}: spec.group, spec.names.kind, spec.names.plural and spec.versions are required`);
  }
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) throw new ToolInputError(`${where}: spec.names.kind "${kind}" is not a kind name (an upper-case letter, then letters and digits)`);
  return { crd: { group: spec.group, names: spec.names!, scope: spec.scope ?? 'Namespaced', versions: spec.versions }, kind, plural };
}

/** The object type of one version: apiVersion, kind, metadata as ObjectMeta, the rest from the schema. */
function versionType(typeName: string, kind: string, group: string, version: CrdVersion): string {
  const schema = version.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const { metadata: _metadata, apiVersion: _apiVersion, kind: _kind, ...rest } = schema.properties ?? {};
  const body = objectType({ ...schema, properties: rest, required: (schema.required ?? []).filter((r) => !['metadata', 'apiVersion', 'kind'].includes(r)) }, '');
  const header = [`${INDENT}apiVersion?: string;`, `${INDENT}kind?: string;`, `${INDENT}metadata?: k8s.V1ObjectMeta;`].join('\n');
  const merged = body === '{}' ? `{\n${header}\n}` : body.replace(/^\{\n/, `{\n${header}\n`);
  return [`/** A ${kind} (${group}/${version.name}) as a review carries it. ${schema.description ?? ''}`.trimEnd().replace(/\*\//g, '*\\/') + ' */', `export type ${typeName} = ${merged};`].join('\n');
}

/**
 * The source of a module with the types of every served version of each CRD in `documents`, a
 * `defineKind` per version, and the storage version's type under the kind's own name.
 */
export function crdTypesSource(documents: readonly { object: unknown; where: string }[]): string {
  const blocks: string[] = [];
  for (const { object, where } of documents) {
    const { crd, kind, plural } = checkedCrd(object, where);
    const served = crd.versions.filter((v) => v.served !== false);
    for (const version of served) {
      const typeName = `${kind}${capitalize(version.name)}`;
      blocks.push(versionType(typeName, kind, crd.group, version));
      const subresources = version.subresources?.status !== undefined ? `, subresources: ['status']` : '';
      blocks.push(
        [
          `/** ${kind} ${crd.group}/${version.name}, for \`defineValidatingWebhook({ kind: ${lowerFirst(kind)}${capitalize(version.name)}, ... })\`. */`,
          `export const ${lowerFirst(kind)}${capitalize(version.name)} = defineKind<${typeName}>({ kind: ${JSON.stringify(kind)}, group: ${JSON.stringify(crd.group)}, version: ${JSON.stringify(version.name)}, plural: ${JSON.stringify(plural)}, namespaced: ${crd.scope !== 'Cluster'}${subresources} });`,
        ].join('\n'),
      );
    }
    const storage = served.find((v) => v.storage) ?? served[0];
    if (storage) blocks.push(`/** ${kind} in its storage version, ${crd.group}/${storage.name}. */\nexport type ${kind} = ${kind}${capitalize(storage.name)};`);
  }
  return [
    '// Generated by `kube-admission-server types --crd`: do not edit; run it again when the CRD changes.',
    "import { defineKind, type k8s } from 'kube-admission-server';",
    '',
    ...blocks.map((b) => `${b}\n`),
  ].join('\n');
}
