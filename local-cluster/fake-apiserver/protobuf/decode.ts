/**
 * kube-apiserver's protobuf encoding (`application/vnd.kubernetes.protobuf`, apimachinery's
 * runtime/serializer/protobuf): the 4-byte magic `k8s\0`, then a runtime.Unknown whose typeMeta
 * names the kind and whose raw bytes are the object's message. Decoded here into the object's
 * JSON form: bytes as base64, Time as RFC 3339 seconds (the zero Time as null), FieldsV1 as the
 * JSON it carries, int64 as a number, empty strings left out as JSON's omitempty leaves them. A field number a message does not declare is refused (the double's definitions are
 * complete for the kinds they cover, so an unknown one is a definition missing here, not data to
 * drop silently); so is a kind without definitions.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { MESSAGES, PROTOBUF_KINDS, type FieldDefinition, type FieldType } from './messages.js';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export class ProtobufDecodeError extends Error {}
/** A well-formed body of a kind the double has no message definitions for. */
export class UnmodelledKindError extends Error {}

type Json = Record<string, unknown>;

/** metav1.Time's JSON form: RFC 3339 in UTC, whole seconds; the zero time is null. */
function timeJson(message: Json): string | null {
  const seconds = Number(message.seconds ?? 0);
  if (seconds === 0 && Number(message.nanos ?? 0) === 0) return null;
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function readScalar(reader: BinaryReader, type: Exclude<FieldType, object>): unknown {
  switch (type) {
    case 'string':
      return reader.string();
    case 'bytes':
      return Buffer.from(reader.bytes()).toString('base64');
    case 'bool':
      return reader.bool();
    case 'int32':
      return reader.int32();
    case 'int64':
      return Number(reader.int64());
  }
}

const SCALAR_WIRE: Record<string, WireType> = {
  string: WireType.LengthDelimited,
  bytes: WireType.LengthDelimited,
  bool: WireType.Varint,
  int32: WireType.Varint,
  int64: WireType.Varint,
};

function readMapEntry(bytes: Uint8Array, valueType: 'string' | 'bytes', where: string): [string, unknown] {
  const reader = new BinaryReader(bytes);
  let key = '';
  let value: unknown = valueType === 'string' ? '' : '';
  while (reader.pos < reader.len) {
    const [number, wireType] = reader.tag();
    if (wireType !== WireType.LengthDelimited || (number !== 1 && number !== 2)) throw new ProtobufDecodeError(`${where}: map entry field ${number} is not a key or value`);
    if (number === 1) key = reader.string();
    else value = readScalar(reader, valueType);
  }
  return [key, value];
}

function readField(reader: BinaryReader, field: FieldDefinition, wireType: WireType, where: string): unknown {
  const { type } = field;
  if (typeof type === 'string') {
    // A packed repeated scalar would come length-delimited; Kubernetes' protos have none outside strings.
    if (wireType !== SCALAR_WIRE[type]) throw new ProtobufDecodeError(`${where}.${field.name}: wire type ${wireType}, expected ${SCALAR_WIRE[type]}`);
    return readScalar(reader, type);
  }
  if (wireType !== WireType.LengthDelimited) throw new ProtobufDecodeError(`${where}.${field.name}: wire type ${wireType}, expected length-delimited`);
  const bytes = reader.bytes();
  if ('map' in type) return readMapEntry(bytes, type.map, `${where}.${field.name}`);
  return decodeMessage(bytes, type.message);
}

/** One message into its JSON form. */
export function decodeMessage(bytes: Uint8Array, messageName: string): unknown {
  if (messageName === 'FieldsV1') {
    const raw = decodeFields(bytes, { 1: { name: 'Raw', type: 'bytes' } }, 'FieldsV1').Raw;
    return raw === undefined ? {} : (JSON.parse(Buffer.from(String(raw), 'base64').toString('utf8')) as unknown);
  }
  if (messageName === 'Time') return timeJson(decodeFields(bytes, { 1: { name: 'seconds', type: 'int64' }, 2: { name: 'nanos', type: 'int32' } }, 'Time'));
  const definition = MESSAGES[messageName];
  if (!definition) throw new ProtobufDecodeError(`no definition of message ${messageName}`);
  return decodeFields(bytes, definition, messageName);
}

function decodeFields(bytes: Uint8Array, definition: Readonly<Record<number, FieldDefinition>>, where: string): Json {
  const reader = new BinaryReader(bytes);
  const json: Json = {};
  while (reader.pos < reader.len) {
    const [number, wireType] = reader.tag();
    const field = definition[number];
    if (!field) throw new ProtobufDecodeError(`${where} has no field ${number} in the double's definitions (send this object as JSON)`);
    const value = readField(reader, field, wireType, where);
    // Go's generated marshaller writes every non-pointer string, empty ones too; JSON omits them.
    if (value === '' && field.type === 'string' && !field.repeated) continue;
    if (typeof field.type === 'object' && 'map' in field.type) {
      const [key, entry] = value as [string, unknown];
      ((json[field.name] ??= {}) as Json)[key] = entry;
    } else if (field.repeated) {
      ((json[field.name] ??= []) as unknown[]).push(value);
    } else {
      json[field.name] = value;
    }
  }
  return json;
}

/** A protobuf request body as the object's JSON, apiVersion and kind from the envelope; `kinds`: those accepted. */
export function decodeKubernetesProtobuf(body: Buffer, kinds: Readonly<Record<string, string>> = PROTOBUF_KINDS): Json {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new ProtobufDecodeError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  }
  let envelope: Json;
  try {
    envelope = decodeFields(body.subarray(MAGIC.length), MESSAGES.Unknown!, 'Unknown');
  } catch (error) {
    if (error instanceof ProtobufDecodeError) throw error;
    throw new ProtobufDecodeError(`the envelope does not decode: ${(error as Error).message}`);
  }
  if (envelope.contentEncoding) throw new ProtobufDecodeError(`content encoding ${String(envelope.contentEncoding)} is not supported`);
  const typeMeta = (envelope.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const message = kinds[`${typeMeta.apiVersion ?? ''}/${typeMeta.kind ?? ''}`];
  if (!message) throw new UnmodelledKindError(`${typeMeta.apiVersion ?? '?'} ${typeMeta.kind ?? '?'}`);
  let object: Json;
  try {
    object = decodeMessage(Buffer.from(String(envelope.raw ?? ''), 'base64'), message) as Json;
  } catch (error) {
    if (error instanceof ProtobufDecodeError) throw error;
    throw new ProtobufDecodeError(`${message} does not decode: ${(error as Error).message}`);
  }
  return { apiVersion: typeMeta.apiVersion, kind: typeMeta.kind, ...object };
}
