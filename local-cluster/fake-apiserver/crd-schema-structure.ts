/**
 * The checks apiextensions makes of a CRD version's openAPIV3Schema (validation.go's
 * ValidateCustomResourceDefinitionOpenAPISchema and schema/validation.go's structural
 * invariants), as far as they decide whether the double can prune, default and validate with
 * it: every node typed (the root an object), arrays with items, properties and
 * additionalProperties not together, metadata at the root holding nothing but name and
 * generateName, the unsupported keywords refused. Structural errors come sorted, as
 * ValidateStructural sorts them. Left out: defaults checked against their schema, CEL rules,
 * list-type and map-type rules beyond their values, the status subresource's root restrictions.
 */
import { forbiddenField, invalidValue, notSupported, required, formatFieldError, type FieldError } from './field-errors.js';
import { isRecord } from './objects.js';
import type { JsonSchema } from './crd-schema.js';

const OPENAPI_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

type Level = 'root' | 'items' | 'field';

const TYPE_REQUIRED: Record<Level, string> = {
  root: 'must not be empty at the root',
  items: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

/** `properties[name]`, as field.Path's Key prints it. */
const key = (path: string, name: string): string => `${path}.properties[${name}]`;

const propertiesOf = (schema: JsonSchema): [string, JsonSchema][] =>
  isRecord(schema.properties) ? Object.entries(schema.properties).filter((entry): entry is [string, JsonSchema] => isRecord(entry[1])) : [];

/** validateStructuralInvariants, for one node and what it holds. */
function structural(schema: JsonSchema, level: Level, path: string, errors: FieldError[]): void {
  const type = typeof schema.type === 'string' ? schema.type : '';
  if (type === 'array' && !isRecord(schema.items)) errors.push(required(`${path}.items`, 'must be specified'));
  if (isRecord(schema.items)) structural(schema.items, 'items', `${path}.items`, errors);
  for (const [name, property] of propertiesOf(schema)) structural(property, 'field', key(path, name), errors);
  if (schema.additionalProperties !== undefined && level === 'root') errors.push(forbiddenField(`${path}.additionalProperties`, 'must not be used at the root'));
  if (isRecord(schema.additionalProperties)) structural(schema.additionalProperties, 'field', `${path}.additionalProperties`, errors);
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (type === '' && !intOrString && !preserve) errors.push(required(`${path}.type`, TYPE_REQUIRED[level]));
  if (level === 'root' && type !== '' && type !== 'object') errors.push(invalidValue(`${path}.type`, type, 'must be object at the root'));
  if (level !== 'root') return;
  for (const [name, property] of propertiesOf(schema)) {
    if ((name === 'kind' || name === 'apiVersion') && property.type !== 'string') {
      errors.push(invalidValue(`${key(path, name)}.type`, property.type ?? '', 'must be string'));
    }
    if (name === 'metadata') rootMetadata(property, key(path, name), errors);
  }
}

/** The root's metadata: type object, and nothing but name and generateName inside. */
function rootMetadata(schema: JsonSchema, path: string, errors: FieldError[]): void {
  if (schema.type !== 'object') errors.push(invalidValue(`${path}.type`, schema.type ?? '', 'must be object'));
  const properties = isRecord(schema.properties) ? Object.keys(schema.properties) : [];
  const others = Object.keys(schema).filter((field) => !['type', 'properties', 'default'].includes(field));
  if (others.length > 0 || properties.some((name) => name !== 'name' && name !== 'generateName')) {
    errors.push(forbiddenField(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
}

/** The per-node checks of ValidateCustomResourceDefinitionOpenAPISchema and specStandardValidatorV3. */
function standard(schema: JsonSchema, path: string, root: boolean, errors: FieldError[]): void {
  const type = typeof schema.type === 'string' ? schema.type : '';
  if (type === 'null') errors.push(forbiddenField(`${path}.type`, 'type cannot be set to null, use nullable as an alternative'));
  else if (type !== '' && !OPENAPI_TYPES.includes(type)) errors.push(notSupported(`${path}.type`, type, OPENAPI_TYPES));
  for (const [keyword, message] of UNSUPPORTED) if (schema[keyword] !== undefined) errors.push(forbiddenField(`${path}.${keyword}`, message));
  if (schema.uniqueItems === true) errors.push(forbiddenField(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (schema.additionalProperties !== undefined && propertiesOf(schema).length > 0 && schema.additionalProperties !== true) {
    errors.push(forbiddenField(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  }
  if (schema['x-kubernetes-preserve-unknown-fields'] === false) {
    errors.push(invalidValue(`${path}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
  }
  if (root && schema.nullable === true) errors.push(forbiddenField(`${path}.nullable`, 'nullable cannot be true at the root'));
  if (isRecord(schema.additionalProperties)) standard(schema.additionalProperties, `${path}.additionalProperties`, false, errors);
  for (const [name, property] of propertiesOf(schema)) standard(property, key(path, name), false, errors);
  if (Array.isArray(schema.items)) errors.push(forbiddenField(`${path}.items`, 'items must be a schema object and not an array'));
  else if (isRecord(schema.items)) standard(schema.items, `${path}.items`, false, errors);
}

const UNSUPPORTED: readonly [string, string][] = [
  ['id', 'id is not supported'],
  ['additionalItems', 'additionalItems is not supported'],
  ['patternProperties', 'patternProperties is not supported'],
  ['definitions', 'definitions is not supported'],
  ['dependencies', 'dependencies is not supported'],
  ['$ref', '$ref is not supported'],
];

/** The schema's problems at `path` (`spec.versions[0].schema.openAPIV3Schema` or `spec.validation.openAPIV3Schema`). */
export function validateOpenApiSchema(schema: JsonSchema, path: string): FieldError[] {
  const structuralErrors: FieldError[] = [];
  structural(schema, 'root', path, structuralErrors);
  structuralErrors.sort((a, b) => (formatFieldError(a) < formatFieldError(b) ? -1 : 1));
  const errors: FieldError[] = [];
  standard(schema, path, true, errors);
  return [...structuralErrors, ...errors];
}
