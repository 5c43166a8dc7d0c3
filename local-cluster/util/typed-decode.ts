/**
 * Decoding JSON into a built-in kind's typed schema, as kube-apiserver does with a mutating
 * webhook's patched object (mutating/dispatcher.go: the JSON serializer into the Go struct):
 * fields the type does not define are dropped, and a value of the wrong JSON type fails the
 * decode. The schema is @kubernetes/client-node's generated models (attributeTypeMap, from the
 * same OpenAPI document as the Go types), as in strict-fields.ts; each model file is loaded when
 * an object first reaches it (the whole package takes half a minute to load under tap's coverage
 * hooks on a busy machine, longer than a request may take).
 *
 * Go's text for a wrong type is `json: cannot unmarshal <json type> into Go struct field
 * <Struct>.<json path> of type <Go type>`; the Go type names here are derived from the models
 * (int32/int64/float64 from their formats) [inferred where the models do not say].
 */

interface Attribute {
  baseName: string;
  type: string;
  format: string;
}

interface GeneratedModel {
  getAttributeTypeMap(): Attribute[];
}


/**
 * Quantity fields, which the models type as strings but Go decodes from a JSON number too
 * (resource.Quantity's UnmarshalJSON): maps of resource names to quantities, and sizeLimit.
 */
const QUANTITY_FIELDS = new Set(['limits', 'requests', 'hard', 'used', 'capacity', 'allocatable', 'overhead', 'sizeLimit']);

const loaded = new Map<string, Promise<GeneratedModel | undefined>>();

/** client-node's generated model class `typeName`, or undefined when it has none. */
function generatedModel(typeName: string): Promise<GeneratedModel | undefined> {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(typeName)) return Promise.resolve(undefined);
  let model = loaded.get(typeName);
  if (!model) {
    model = import(`@kubernetes/client-node/dist/gen/models/${typeName}.js`).then(
      (module: Record<string, Partial<GeneratedModel> | undefined>) => {
        const candidate = module[typeName];
        return typeof candidate?.getAttributeTypeMap === 'function' ? (candidate as GeneratedModel) : undefined;
      },
      () => undefined,
    );
    loaded.set(typeName, model);
  }
  return model;
}

/** client-node's class for a kind: {apps, v1, Deployment} -> V1Deployment. */
function modelNameOf(version: string, kind: string): string {
  return `${version.charAt(0).toUpperCase()}${version.slice(1)}${kind}`;
}

export class TypedDecodeError extends Error {}

/** Go's name of the JSON value's type in an UnmarshalTypeError. */
function jsonTypeOf(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  if (Array.isArray(value)) return 'array';
  return 'object';
}

/** V1PodSpec -> PodSpec; the Go package is v1 (or the version's). */
const structName = (model: string): string => model.replace(/^(V\d+(alpha\d+|beta\d+)?|Core|Apps|Batch|Rbac|Policy|Discovery|Events|Networking|Storage|Authentication|Authorization|Admissionregistration)+/, '');
const goPackage = (model: string): string => (/^(v\d+(?:alpha\d+|beta\d+)?)/i.exec(model)?.[1] ?? 'v1').toLowerCase();

function goTypeOf(type: string, format: string): string {
  if (type === 'string') return format === 'byte' ? '[]uint8' : 'string';
  if (type === 'number') return format === 'int32' ? 'int32' : format === 'int64' ? 'int64' : 'float64';
  if (type === 'boolean') return 'bool';
  if (type === 'Date') return 'v1.Time';
  const array = /^Array<(.+)>$/.exec(type);
  if (array) return `[]${goTypeOf(array[1]!, '')}`;
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return `map[string]${goTypeOf(map[1]!, '')}`;
  if (/^[A-Z]/.test(type)) return `${goPackage(type)}.${structName(type)}`;
  return 'interface {}';
}

interface Place {
  /** The Go struct that holds the field. */
  struct: string;
  /** JSON names from the root, dot-separated, no indices (Go's UnmarshalTypeError.Field). */
  path: string;
}

function wrongType(value: unknown, place: Place, type: string, format: string): TypedDecodeError {
  return new TypedDecodeError(`json: cannot unmarshal ${jsonTypeOf(value)} into Go struct field ${place.struct}.${place.path} of type ${goTypeOf(type, format)}`);
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

async function decodeValue(value: unknown, type: string, format: string, place: Place, field: string): Promise<unknown> {
  if (value === null) return null;
  if (type === 'any' || type === '{ [key: string]: any; }' || type === 'Array<any>') return value;
  if (type === 'IntOrString' || format === 'int-or-string') {
    if (typeof value === 'string' || typeof value === 'number') return value;
    throw wrongType(value, place, 'IntOrString', format);
  }
  if (type === 'string') {
    if (typeof value === 'number' && QUANTITY_FIELDS.has(field)) return value;
    if (typeof value !== 'string') throw wrongType(value, place, type, format);
    if (format === 'byte' && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw new TypedDecodeError('illegal base64 data at input byte 0');
    return value;
  }
  if (type === 'number') {
    if (typeof value !== 'number' || (format.startsWith('int') && !Number.isInteger(value))) {
      throw typeof value === 'number' ? new TypedDecodeError(`json: cannot unmarshal number ${value} into Go struct field ${place.struct}.${place.path} of type ${goTypeOf(type, format)}`) : wrongType(value, place, type, format);
    }
    return value;
  }
  if (type === 'boolean') {
    if (typeof value !== 'boolean') throw wrongType(value, place, type, format);
    return value;
  }
  if (type === 'Date') {
    if (typeof value !== 'string') throw wrongType(value, place, type, format);
    return value;
  }
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) throw wrongType(value, place, type, format);
    return Promise.all(value.map((item) => decodeValue(item, array[1]!, '', place, field)));
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (!isRecord(value)) throw wrongType(value, place, type, format);
    const entries = await Promise.all(Object.entries(value).map(async ([key, item]) => [key, await decodeValue(item, map[1]!, '', place, field)] as const));
    return Object.fromEntries(entries);
  }
  const model = await generatedModel(type);
  if (!model) return value;
  if (!isRecord(value)) throw wrongType(value, place, type, format);
  return decodeModel(value, type, model, place.path);
}

async function decodeModel(value: Record<string, unknown>, typeName: string, model: GeneratedModel, path: string): Promise<Record<string, unknown>> {
  const attributes = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a]));
  const decoded: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const attribute = attributes.get(key);
    if (!attribute) continue; // an unknown field: dropped, as Go's decoder drops it
    const place = { struct: structName(typeName), path: path === '' ? key : `${path}.${key}` };
    decoded[key] = await decodeValue(item, attribute.type, attribute.format, place, key);
  }
  return decoded;
}

/** True when the kind has a typed schema here (built-in kinds); custom resources stay unstructured. */
export async function hasTypedSchema(version: string, kind: string): Promise<boolean> {
  return (await generatedModel(modelNameOf(version, kind))) !== undefined;
}

/** The object as the typed schema keeps it; throws TypedDecodeError with Go's text when a value does not fit. */
export async function decodeTyped<T extends Record<string, unknown>>(object: T, version: string, kind: string): Promise<T> {
  const typeName = modelNameOf(version, kind);
  const model = await generatedModel(typeName);
  if (!model) throw new Error(`no typed schema for ${version} ${kind}`);
  return (await decodeModel(object, typeName, model, '')) as T;
}
