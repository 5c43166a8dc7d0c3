/**
 * A custom resource checked against its version's openAPIV3Schema as kube-openapi's
 * SchemaValidator does it (validate/schema.go: type, string, number, slice, enum, object, in
 * that order for each value), its errors turned into field errors by apiextensions'
 * kubeOpenAPIResultToFieldErrors: `x in body must be of type integer: "string"` as an Invalid
 * value of the JSON type's name, enum as Unsupported value, maxLength as Too long, maxItems and
 * maxProperties as Too many, required as Required value. On an update, an unchanged value keeps
 * its errors to itself (validation ratcheting, on by default from 1.30): only what the write
 * changes is held to the schema.
 * Not evaluated: allOf/anyOf/oneOf/not, formats, x-kubernetes-validations (CEL), list-type set and
 * map uniqueness.
 */
import { invalidValue, notSupported, required, type FieldError } from './field-errors.js';
import { itemsOf, propertiesOf, sameValue, type JsonSchema } from './crd-schema.js';
import { isRecord } from './objects.js';

const IN = 'in body';

/** The value's JSON type as schemaInfoForType names it (an integral number is an integer). */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

/** The Go format schemaInfoForType gives a decoded number (unstructured JSON has int64 and float64). */
const numberFormat = (value: number): string => (Number.isInteger(value) ? 'int64' : 'float64');

function typeNames(schema: JsonSchema): string[] {
  if (schema['x-kubernetes-int-or-string'] === true) return ['integer', 'string'];
  return typeof schema.type === 'string' && schema.type !== '' ? [schema.type] : [];
}

const typeInvalid = (path: string, typeName: string, actual: string): FieldError => ({
  type: 'TypeInvalid',
  field: path,
  badValue: actual,
  detail: `${path} ${IN} must be of type ${typeName}: ${JSON.stringify(actual)}`,
});

/** typeValidator.Validate: null only where nullable; an integral number passes as integer and any number as number. */
function checkType(value: unknown, schema: JsonSchema, path: string): FieldError | undefined {
  const types = typeNames(schema);
  const format = typeof schema.format === 'string' ? schema.format : '';
  if (types.length === 0 && format === '') return undefined;
  if (value === null) return types.length > 0 && !types.includes('null') && schema.nullable !== true ? typeInvalid(path, types.join(','), 'null') : undefined;
  const actual = jsonType(value);
  const numeric = typeof value === 'number';
  const floatInt = actual === 'number' && Number.isInteger(value) && types.includes('integer');
  const intFloat = actual === 'integer' && types.includes('number');
  const stringLike = typeof value === 'string' || Array.isArray(value);
  if (!stringLike && format !== '' && !(types.includes(actual) || (numeric && numberFormat(value) === format) || floatInt || intFloat)) {
    return typeInvalid(path, format, numeric ? numberFormat(value) : '');
  }
  if (!(types.includes('number') || types.includes('integer')) && format !== '' && stringLike) return undefined;
  if (!(types.includes(actual) || floatInt || intFloat)) return typeInvalid(path, types.join(','), actual);
  return undefined;
}

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** RE2 and JavaScript agree on the patterns CRDs use; one JavaScript cannot compile is left unchecked. */
function matches(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    return true;
  }
}

function checkString(value: string, schema: JsonSchema, path: string): FieldError[] {
  const length = [...value].length;
  const max = num(schema.maxLength);
  if (max !== undefined && length > max) return [{ type: 'TooLong', field: path, max }];
  const min = num(schema.minLength);
  if (min !== undefined && length < min) return [invalidValue(path, value, `${path} ${IN} should be at least ${min} chars long`)];
  if (typeof schema.pattern === 'string' && !matches(schema.pattern, value)) {
    return [invalidValue(path, value, `${path} ${IN} should match '${schema.pattern}'`)];
  }
  return [];
}

function checkNumber(value: number, schema: JsonSchema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const max = num(schema.maximum);
  if (max !== undefined && (schema.exclusiveMaximum === true ? value >= max : value > max)) {
    errors.push(invalidValue(path, value, `${path} ${IN} should be less than ${schema.exclusiveMaximum === true ? '' : 'or equal to '}${max}`));
  }
  const min = num(schema.minimum);
  if (min !== undefined && (schema.exclusiveMinimum === true ? value <= min : value < min)) {
    errors.push(invalidValue(path, value, `${path} ${IN} should be greater than ${schema.exclusiveMinimum === true ? '' : 'or equal to '}${min}`));
  }
  return errors;
}

function checkEnum(value: unknown, schema: JsonSchema, path: string): FieldError[] {
  if (!Array.isArray(schema.enum) || schema.enum.length === 0) return [];
  if (schema.enum.some((allowed) => sameValue(allowed, value))) return [];
  return [notSupported(path, value, schema.enum.map((allowed) => (typeof allowed === 'string' ? allowed : JSON.stringify(allowed))))];
}

const childPath = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** x-kubernetes-list-type=map items correlate by their keys; other lists only as a whole. */
function oldItem(schema: JsonSchema, old: Old, item: unknown): Old {
  if (old === undefined || !Array.isArray(old.value) || schema['x-kubernetes-list-type'] !== 'map' || !isRecord(item)) return undefined;
  const keys = Array.isArray(schema['x-kubernetes-list-map-keys']) ? schema['x-kubernetes-list-map-keys'].map(String) : [];
  const match = old.value.find((candidate) => isRecord(candidate) && keys.every((key) => sameValue(candidate[key], item[key])));
  return match === undefined ? undefined : { value: match };
}

function checkArray(value: unknown[], schema: JsonSchema, path: string, old: Old): FieldError[] {
  const errors: FieldError[] = [];
  const items = itemsOf(schema);
  if (items) value.forEach((item, index) => errors.push(...validateNode(item, items, `${path}[${index}]`, oldItem(schema, old, item))));
  const min = num(schema.minItems);
  if (min !== undefined && value.length < min) errors.push(invalidValue(path, value.length, `${path} ${IN} should have at least ${min} items`));
  const max = num(schema.maxItems);
  if (max !== undefined && value.length > max) errors.push({ type: 'TooMany', field: path, badValue: value.length, max });
  return errors;
}

function oldField(old: Old, key: string): Old {
  return old !== undefined && isRecord(old.value) && key in old.value ? { value: old.value[key] } : undefined;
}

function checkObject(value: Record<string, unknown>, schema: JsonSchema, path: string, old: Old): FieldError[] {
  const errors: FieldError[] = [];
  const count = Object.keys(value).length;
  const min = num(schema.minProperties);
  if (min !== undefined && count < min) errors.push(invalidValue(path, count, `${path} ${IN} should have at least ${min} properties`));
  const max = num(schema.maxProperties);
  if (max !== undefined && count > max) errors.push({ type: 'TooMany', field: path, badValue: count, max });
  const properties = propertiesOf(schema);
  if (isRecord(schema.additionalProperties)) {
    for (const [key, item] of Object.entries(value)) {
      if (!(key in properties)) errors.push(...validateNode(item, schema.additionalProperties, childPath(path, key), oldField(old, key)));
    }
  }
  for (const [key, property] of Object.entries(properties)) {
    if (key in value) errors.push(...validateNode(value[key], property, childPath(path, key), oldField(old, key)));
  }
  const requiredKeys = Array.isArray(schema.required) ? schema.required.map(String) : [];
  for (const key of requiredKeys) if (!(key in value)) errors.push(required(childPath(path, key)));
  return errors;
}

/** The old value at the same place, for ratcheting; undefined where nothing correlates. */
type Old = { value: unknown } | undefined;

function validateNode(value: unknown, schema: JsonSchema, path: string, old: Old): FieldError[] {
  if (old !== undefined && sameValue(old.value, value)) return [];
  const typeError = checkType(value, schema, path);
  const errors: FieldError[] = typeError ? [typeError] : [];
  if (value === null) return [...errors, ...checkEnum(value, schema, path)];
  if (typeof value === 'string') errors.push(...checkString(value, schema, path));
  if (typeof value === 'number') errors.push(...checkNumber(value, schema, path));
  if (Array.isArray(value)) errors.push(...checkArray(value, schema, path, old));
  errors.push(...checkEnum(value, schema, path));
  if (isRecord(value)) errors.push(...checkObject(value, schema, path, old));
  return errors;
}

/**
 * The schema's errors for `object`; with `old` (an update under ratcheting) values equal to the
 * old object's at the same place are not held to the schema. apiVersion and kind never correlate.
 */
export function validateAgainstSchema(object: Record<string, unknown>, schema: JsonSchema | undefined, old?: Record<string, unknown>): FieldError[] {
  if (schema === undefined) return [];
  if (old === undefined) return validateNode(object, schema, '', undefined);
  const { apiVersion: _apiVersion, kind: _kind, ...correlatable } = old;
  return validateNode(object, schema, '', { value: correlatable });
}
