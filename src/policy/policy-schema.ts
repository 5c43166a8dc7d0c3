/**
 * The policy file's JSON Schema (schema/policy.schema.json): what editors complete and check
 * through yaml-language-server, and what the loader validates structure with where that is all
 * a check needs (the `cel` fields). Problems come back as `YamlField` reports: path and line.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { isMap, isSeq, type Node, type Pair } from 'yaml';
import { YamlField } from '../util/yaml-field.js';

/** schema/ beside src/ (and beside dist/ when compiled). */
export const POLICY_SCHEMA_FILE = new URL('../../schema/policy.schema.json', import.meta.url).pathname.replace(/\/dist\/schema\//, '/schema/');

let ajv: Ajv | undefined;
let schema: { $schema?: string; definitions?: Record<string, object> } | undefined;
const validators = new Map<string, ValidateFunction>();

function policyAjv(): Ajv {
  if (!ajv) {
    // Strict, except the checks that if/then and kind-dependent requirements trip over.
    ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, strictTypes: false });
    schema = JSON.parse(readFileSync(POLICY_SCHEMA_FILE, 'utf8')) as typeof schema;
    ajv.addSchema(schema!, 'policy');
  }
  return ajv;
}

function validator(definition: string): ValidateFunction {
  let validate = validators.get(definition);
  if (validate) return validate;
  const own = policyAjv();
  const part = schema!.definitions?.[definition];
  if (!part) throw new Error(`the policy schema has no definition "${definition}"`);
  // A definition that refers to no other is compiled alone: asked for by its fragment, Ajv
  // compiles the whole schema first, about 100 ms of every start and tool run for the cel
  // fields, which never need the rest.
  validate = JSON.stringify(part).includes('"$ref"') ? own.getSchema(`policy#/definitions/${definition}`) : own.compile({ $schema: schema!.$schema, ...part });
  if (!validate) throw new Error(`the policy schema has no definition "${definition}"`);
  validators.set(definition, validate);
  return validate;
}

/** The whole-document validator, for tests and tools that check a file as an editor would. */
export function policySchemaValidator(): ValidateFunction {
  return policyAjv().getSchema('policy')!;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null || value === undefined) return 'empty';
  if (typeof value === 'object') return 'a mapping';
  return JSON.stringify(value);
}

const TYPE_NAMES: Record<string, string> = { object: 'a mapping', array: 'a list', string: 'a string', integer: 'an integer', boolean: 'true or false', number: 'a number' };

/** One line in the loader's words for a schema error. */
export function schemaMessage(error: ErrorObject): string {
  const schema = (error.parentSchema ?? {}) as { description?: string; properties?: Record<string, { description?: string }> };
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      const hint = schema.properties?.[missing]?.description;
      return `missing required field "${missing}"${hint ? ` (${hint})` : ''}`;
    }
    case 'additionalProperties':
      return `unknown field "${String(params.additionalProperty)}"; valid fields: ${Object.keys(schema.properties ?? {}).join(', ')}`;
    case 'type':
      return `must be ${TYPE_NAMES[String(params.type)] ?? String(params.type)}, got ${describe(error.data)}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).join(', ')}, got ${describe(error.data)}`;
    case 'const':
      return `must be ${String(params.allowedValue)}, got ${describe(error.data)}`;
    case 'minItems':
      return params.limit === 1 ? 'must list at least one entry' : `must list at least ${String(params.limit)} entries`;
    case 'maxItems':
      return `has ${(error.data as unknown[]).length} entries; at most ${String(params.limit)} are allowed`;
    case 'minLength':
      return 'must not be empty';
    case 'maxLength':
      return `is ${String(error.data).length} characters long; at most ${String(params.limit)} are allowed`;
    case 'pattern':
      return `${describe(error.data)} is not valid: it must match ${schema.description ?? String(params.pattern)}`;
    default:
      return error.message ?? error.keyword;
  }
}

/** The YAML node an instance path points at (and its key node, for unknown fields). */
function locate(field: YamlField, instancePath: string, additional?: string): { node: Node; path: string; keyOffset?: number } {
  let node: Node = field.node;
  let path = field.path;
  for (const raw of instancePath.split('/').slice(1)) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (isSeq(node)) {
      node = (node.items[Number(segment)] as Node | undefined) ?? node;
      path = `${path}[${segment}]`;
    } else if (isMap(node)) {
      const pair = node.items.find((p: Pair) => (p.key as { value?: unknown } | null)?.value === segment);
      node = (pair?.value as Node | undefined) ?? node;
      path = `${path}.${segment}`;
    }
  }
  if (additional !== undefined && isMap(node)) {
    const key = node.items.find((p: Pair) => (p.key as { value?: unknown } | null)?.value === additional)?.key as Node | undefined;
    return { node, path, ...(key?.range ? { keyOffset: key.range[0] } : {}) };
  }
  return { node, path };
}

/**
 * Validates `field` against the schema's `definition`; reports each problem at its node (an
 * unknown field at its key) and returns whether there was none.
 */
export function checkAgainstSchema(field: YamlField, definition: string): boolean {
  const validate = validator(definition);
  if (validate(field.node.toJSON())) return true;
  // `if`/`then` wrappers repeat what their inner errors say.
  const errors = (validate.errors ?? []).filter((e) => e.keyword !== 'if');
  for (const error of errors) {
    const additional = error.keyword === 'additionalProperties' ? String((error.params as { additionalProperty: unknown }).additionalProperty) : undefined;
    const at = locate(field, error.instancePath, additional);
    new YamlField(field.problems, field.doc, at.node, at.path).report(schemaMessage(error), at.keyOffset);
  }
  return errors.length === 0;
}
