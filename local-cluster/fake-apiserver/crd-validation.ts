/**
 * CustomResourceDefinitions as apiextensions-apiserver stores them: v1's defaults (singular and
 * listKind from the kind, conversion None), the strategy's status handling (reset on create,
 * storedVersions gaining each new storage version) and the validation of
 * pkg/apis/apiextensions/validation in its order: metadata (the name is plural.group), group,
 * scope, each version (name, schema, subresources, printer columns), one storage version,
 * unique version names, the names, storedVersions; on update group and plural never change, and
 * scope and kind not once the CRD is Established. As v1's conversion does, a schema, the
 * subresources or the printer columns that all versions share are checked once, at
 * `spec.validation`, `spec.subresources` and `spec.additionalPrinterColumns`.
 */
import { isDeepStrictEqual } from 'node:util';
import { invalidValue, notSupported, required, type FieldError } from './field-errors.js';
import { crdSpec, isConditionTrue, storedVersionsOf, type CrdSpec, type CrdVersion } from './crd-object.js';
import { validateOpenApiSchema } from './crd-schema-structure.js';
import { validateObjectMeta } from './meta-validation.js';
import { isDns1035Label, isDns1123Subdomain } from './names.js';
import { isRecord, type KubeObject } from './objects.js';

type Json = Record<string, unknown>;

const rec = (value: unknown): Json => (isRecord(value) ? value : {});
const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

/** SetDefaults_CustomResourceDefinitionSpec. */
export function defaultCustomResourceDefinition(crd: KubeObject): void {
  const spec = rec(crd.spec);
  const names = rec(spec.names);
  const kind = typeof names.kind === 'string' ? names.kind : '';
  if (!names.singular) names.singular = kind.toLowerCase();
  if (!names.listKind && kind !== '') names.listKind = `${kind}List`;
  if (isRecord(spec.names)) spec.names = names;
  spec.conversion ??= { strategy: 'None' };
  if (isRecord(crd.spec)) crd.spec = spec;
}

const storageVersion = (spec: CrdSpec): string | undefined => spec.versions.find((version) => version.storage)?.name;

/** PrepareForCreate: a status of its own (no names accepted yet) with the storage version stored. */
export function prepareCrdForCreate(crd: KubeObject): void {
  const stored = storageVersion(crdSpec(crd));
  crd.status = { acceptedNames: { plural: '', kind: '' }, ...(stored ? { storedVersions: [stored] } : {}) };
}

/** PrepareForUpdate: a new storage version joins status.storedVersions. */
export function prepareCrdForUpdate(crd: KubeObject): void {
  const stored = storageVersion(crdSpec(crd));
  const versions = storedVersionsOf(crd);
  if (stored && !versions.includes(stored)) crd.status = { ...rec(crd.status), storedVersions: [...versions, stored] };
}

const dns1035 = (field: string, value: string, prefix = ''): FieldError[] => isDns1035Label(value).map((message) => invalidValue(field, value, prefix + message));

function validateGroup(group: string): FieldError[] {
  if (group === '') return [required('spec.group')];
  const problems = isDns1123Subdomain(group);
  if (problems.length > 0) return [invalidValue('spec.group', group, problems.join(','))];
  if (group.split('.').length < 2) return [invalidValue('spec.group', group, 'should be a domain with at least one dot')];
  return [];
}

function validateColumn(column: Json, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const types = `must be one of ${COLUMN_TYPES.join(',')}`;
  if (!column.name) errors.push(required(`${path}.name`));
  if (!column.type) errors.push(required(`${path}.type`, types));
  else if (!COLUMN_TYPES.includes(String(column.type))) errors.push(invalidValue(`${path}.type`, column.type, types));
  if (column.format && !COLUMN_FORMATS.includes(String(column.format))) errors.push(invalidValue(`${path}.format`, column.format, `must be one of ${COLUMN_FORMATS.join(',')}`));
  const jsonPath = typeof column.jsonPath === 'string' ? column.jsonPath : '';
  if (jsonPath === '') errors.push(required(`${path}.JSONPath`));
  else if (!jsonPath.startsWith('.')) errors.push(invalidValue(`${path}.JSONPath`, jsonPath, 'must be a simple json path starting with .'));
  return errors;
}

function validateScalePath(value: unknown, path: string, under: string[]): FieldError[] {
  const text = typeof value === 'string' ? value : '';
  if (text === '') return [required(path)];
  if (!text.startsWith('.')) return [invalidValue(path, text, 'must be a simple json path starting with .')];
  if (!under.some((prefix) => text.startsWith(prefix))) return [invalidValue(path, text, `should be a json path under ${under.map((p) => p.slice(0, -1)).join(' or ')}`)];
  return [];
}

function validateSubresources(subresources: Json, path: string): FieldError[] {
  const scale = subresources.scale;
  if (!isRecord(scale)) return [];
  return [
    ...validateScalePath(scale.specReplicasPath, `${path}.scale.specReplicasPath`, ['.spec.']),
    ...validateScalePath(scale.statusReplicasPath, `${path}.scale.statusReplicasPath`, ['.status.']),
  ];
}

/** A per-version field every version shares is validated once, at the top level (v1 → internal conversion). */
function shared(versions: CrdVersion[], read: (version: CrdVersion) => unknown): boolean {
  return versions.length > 0 && versions.every((version) => isDeepStrictEqual(read(version), read(versions[0]!)));
}

function validateVersions(spec: CrdSpec): FieldError[] {
  const errors: FieldError[] = [];
  const sharedSchema = shared(spec.versions, (v) => v.schema);
  const sharedSubresources = shared(spec.versions, (v) => v.subresources);
  const sharedColumns = shared(spec.versions, (v) => v.columns);
  if (!(sharedSchema && spec.versions[0]?.schema)) {
    spec.versions.forEach((version, i) => {
      if (!version.schema) errors.push(required(`spec.versions[${i}].schema.openAPIV3Schema`));
    });
  }
  spec.versions.forEach((version, i) => {
    const path = `spec.versions[${i}]`;
    errors.push(...dns1035(`${path}.name`, version.name));
    if (!version.deprecated && version.deprecationWarning !== undefined) errors.push(invalidValue(`${path}.deprecationWarning`, version.deprecationWarning, 'can only be set for deprecated versions'));
    if (!sharedSchema && version.schema) errors.push(...validateOpenApiSchema(version.schema, `${path}.schema.openAPIV3Schema`));
    if (!sharedSubresources) errors.push(...validateSubresources(version.subresources, `${path}.subresources`));
    if (!sharedColumns) version.columns.forEach((column, c) => errors.push(...validateColumn(column, `${path}.additionalPrinterColumns[${c}]`)));
  });
  const names = spec.versions.map((version) => version.name);
  if (new Set(names).size !== names.length) errors.push(invalidValue('spec.versions', spec.versions, 'must contain unique version names'));
  if (spec.versions.filter((version) => version.storage).length !== 1) errors.push(invalidValue('spec.versions', spec.versions, 'must have exactly one version marked as storage version'));
  return errors;
}

function validateNames(spec: CrdSpec): FieldError[] {
  const { names } = spec;
  const errors: FieldError[] = [];
  if (names.plural === '') errors.push(required('spec.names.plural'));
  if (names.singular === '') errors.push(required('spec.names.singular'));
  if (names.kind === '') errors.push(required('spec.names.kind'));
  if (names.listKind === '') errors.push(required('spec.names.listKind'));
  if (names.plural !== '') errors.push(...dns1035('spec.names.plural', names.plural));
  if (names.singular !== '') errors.push(...dns1035('spec.names.singular', names.singular));
  const mixedCase = 'may have mixed case, but should otherwise match: ';
  if (names.kind !== '' && isDns1035Label(names.kind.toLowerCase()).length > 0) errors.push(invalidValue('spec.names.kind', names.kind, mixedCase + isDns1035Label(names.kind.toLowerCase()).join(',')));
  if (names.listKind !== '' && isDns1035Label(names.listKind.toLowerCase()).length > 0) errors.push(invalidValue('spec.names.listKind', names.listKind, mixedCase + isDns1035Label(names.listKind.toLowerCase()).join(',')));
  names.shortNames.forEach((shortName, i) => errors.push(...dns1035(`spec.names.shortNames[${i}]`, shortName)));
  if (names.kind !== '' && names.kind === names.listKind) errors.push(invalidValue('spec.names.listKind', names.listKind, 'kind and listKind may not be the same'));
  names.categories.forEach((category, i) => errors.push(...dns1035(`spec.names.categories[${i}]`, category)));
  return errors;
}

/** The top-level schema, subresources and columns when every version shares them. */
function validateShared(spec: CrdSpec): FieldError[] {
  const first = spec.versions[0];
  if (!first) return [];
  const errors: FieldError[] = [];
  if (shared(spec.versions, (v) => v.schema) && first.schema) errors.push(...validateOpenApiSchema(first.schema, 'spec.validation.openAPIV3Schema'));
  if (shared(spec.versions, (v) => v.subresources)) errors.push(...validateSubresources(first.subresources, 'spec.subresources'));
  if (shared(spec.versions, (v) => v.columns)) first.columns.forEach((column, c) => errors.push(...validateColumn(column, `spec.additionalPrinterColumns[${c}]`)));
  return errors;
}

function validateConversion(crd: KubeObject): FieldError[] {
  const strategy = rec(rec(crd.spec).conversion).strategy;
  if (strategy === 'None' || strategy === 'Webhook') return [];
  return strategy === undefined || strategy === '' ? [required('spec.conversion.strategy')] : [notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook'])];
}

/** ValidateCustomResourceDefinitionStoredVersions. */
function validateStoredVersions(crd: KubeObject, spec: CrdSpec): FieldError[] {
  const stored = storedVersionsOf(crd);
  if (stored.length === 0) return [invalidValue('status.storedVersions', stored, 'must have at least one stored version')];
  const errors: FieldError[] = [];
  for (const version of spec.versions) {
    if (version.storage && !stored.includes(version.name)) errors.push(invalidValue('status.storedVersions', stored, `must have the storage version ${version.name}`));
  }
  stored.forEach((name, i) => {
    if (spec.versions.some((version) => version.name === name)) return;
    const detail = `missing from spec.versions; ${name} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${name} and removes ${name} from status.storedVersions`;
    errors.push(invalidValue(`status.storedVersions[${i}]`, name, detail));
  });
  return errors;
}

/** The metadata; on create the name must also be `<plural>.<group>`. */
function validateMetadata(crd: KubeObject, spec: CrdSpec, creating: boolean): FieldError[] {
  const name = crd.metadata?.name ?? '';
  const errors = validateObjectMeta(crd.metadata ?? {}, 'subdomain');
  if (creating && name !== '' && name !== `${spec.names.plural}.${spec.group}`) errors.push(invalidValue('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  return errors;
}

const immutable = (field: string, value: unknown): FieldError => invalidValue(field, value, 'field is immutable');

function validateImmutable(spec: CrdSpec, old: KubeObject): FieldError[] {
  const before = crdSpec(old);
  const errors: FieldError[] = [];
  if (isConditionTrue(old, 'Established')) {
    if (spec.scope !== before.scope) errors.push(immutable('spec.scope', spec.scope));
    if (spec.names.kind !== before.names.kind) errors.push(immutable('spec.names.kind', spec.names.kind));
  }
  if (spec.group !== before.group) errors.push(immutable('spec.group', spec.group));
  if (spec.names.plural !== before.names.plural) errors.push(immutable('spec.names.plural', spec.names.plural));
  return errors;
}

function validateScope(scope: string): FieldError[] {
  if (scope === '') return [required('spec.scope')];
  return ['Cluster', 'Namespaced'].includes(scope) ? [] : [notSupported('spec.scope', scope, ['Cluster', 'Namespaced'])];
}

function validatePreserveUnknownFields(crd: KubeObject): FieldError[] {
  if (rec(crd.spec).preserveUnknownFields !== true) return [];
  return [invalidValue('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead')];
}

/** ValidateCustomResourceDefinition, or ValidateCustomResourceDefinitionUpdate with `old`. */
export function validateCustomResourceDefinition(crd: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = crdSpec(crd);
  return [
    ...validateMetadata(crd, spec, old === undefined),
    ...validateGroup(spec.group),
    ...validateScope(spec.scope),
    ...validateVersions(spec),
    ...validateNames(spec),
    ...validateShared(spec),
    ...validateConversion(crd),
    ...(old ? validateImmutable(spec, old) : []),
    ...validateStoredVersions(crd, spec),
    ...(old ? [] : validatePreserveUnknownFields(crd)),
  ];
}
