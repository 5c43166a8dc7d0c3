/**
 * The product's Kubernetes CEL library (src/cel/library and kubernetes-library.ts) carried onto
 * @bufbuild/cel through its public API, for bench/cel-engines.ts only: a recording stand-in for
 * cel-js's Environment takes every registration, and each function becomes a celFunc/celMethod
 * over the same handler. @bufbuild/cel takes no opaque type but a protobuf message, so each
 * library type (net.IP, Quantity, ...) becomes a message made at run time whose one field is a
 * handle into a side table, equal values sharing a handle (so `==` compares them as the library
 * does). Macros (`ast` parameters) and the AdmissionRequest's schema types cannot be carried:
 * @bufbuild/cel has no macro hook and no type checker. `reset()` empties the side table.
 */
import { celEnv, celFunc, celMethod, celUint, CelScalar, isCelList, isCelMap, isCelUint, listType, mapType, objectType, type CelEnv, type CelFunc, type CelType } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { create, createFileRegistry, type DescMessage } from '@bufbuild/protobuf';
import { DurationSchema, FileDescriptorSetSchema, TimestampSchema } from '@bufbuild/protobuf/wkt';
import { Environment, Optional } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { registerKubernetesLibrary } from '../src/cel/kubernetes-library.js';
import { celEquals } from '../src/cel/library/equality.js';
import { CEL_LIBRARIES } from '../src/cel/library/index.js';

type Handler = (...args: unknown[]) => unknown;
type Ctor = abstract new (...args: never[]) => object;

interface Registered {
  receiver: string | undefined;
  name: string;
  params: string[];
  handler: Handler;
}

/** cel-js's own optional functions, declared as the library declares its types (its `.?` and `[?]` syntax cannot be carried). */
const OPTIONAL_FUNCTIONS: [string, Handler][] = [
  ['OptionalNamespace.of(dyn): cel.Optional', (_, v) => Optional.of(v)],
  ['OptionalNamespace.none(): cel.Optional', () => Optional.none()],
  ['cel.Optional.hasValue(): bool', (o) => (o as Optional).hasValue()],
  ['cel.Optional.value(): dyn', (o) => (o as Optional).value()],
  ['cel.Optional.orValue(dyn): dyn', (o, v) => (o as Optional).orValue(v)],
  ['cel.Optional.or(cel.Optional): cel.Optional', (o, p) => (o as Optional).or(p as Optional)],
];

/** Splits `list<string>, map<string, int>` at its top-level commas. */
function splitTypes(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '<') depth++;
    if (ch === '>') depth--;
    if (ch === ',' && depth === 0) {
      out.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

/** The registrations the library makes, in the part of cel-js's Environment API it uses. */
class Recorder {
  readonly types = new Map<string, Ctor>();
  readonly functions: Registered[] = [];
  readonly equality = new Map<string, (a: unknown, b: unknown) => boolean>();
  /** What could not be carried, for the report. */
  readonly notCarried: string[] = [];

  registerType(name: string, definition: Ctor | { ctor?: Ctor }): this {
    const ctor = typeof definition === 'function' ? definition : definition.ctor;
    if (ctor) this.types.set(name, ctor);
    else this.notCarried.push(`type ${name} (a schema)`);
    return this;
  }
  registerConstant(name: string, type: string): this {
    if (!type.endsWith('Namespace')) this.notCarried.push(`type identifier ${name} (@bufbuild/cel names message types itself)`);
    return this;
  }
  registerVariable(): this {
    return this;
  }
  registerOperator(signature: string, handler: (a: unknown, b: unknown) => boolean): this {
    const [left, op, right] = signature.split(' ');
    if (op === '==' && left === right) this.equality.set(left!, handler);
    else this.notCarried.push(`operator ${signature}`);
    return this;
  }
  registerFunction(signature: string, handler: Handler): this {
    const [, head = '', params = ''] = /^(.*?)\((.*)\):/.exec(signature) ?? [];
    const types = splitTypes(params);
    if (types.includes('ast')) {
      this.notCarried.push(`macro ${head}`);
      return this;
    }
    const dot = head.lastIndexOf('.');
    this.functions.push({ receiver: dot > 0 ? head.slice(0, dot) : undefined, name: head.slice(dot + 1), params: types, handler });
    return this;
  }
  /** declareTypeIdentifier reads a type's value this way; @bufbuild/cel needs none. */
  evaluate(): undefined {
    return undefined;
  }
}

const recorder = new Recorder();
recorder.registerType('cel.Optional', Optional);
recorder.registerOperator('cel.Optional == cel.Optional', (a, b) => {
  const [x, y] = [a as Optional, b as Optional];
  return x.hasValue() === y.hasValue() && (!x.hasValue() || celEquals(x.value(), y.value()));
});
for (const [signature, handler] of OPTIONAL_FUNCTIONS) recorder.registerFunction(signature, handler);
const asEnvironment = recorder as unknown as Environment;
registerKubernetesLibrary(asEnvironment);
for (const library of CEL_LIBRARIES) library.register(asEnvironment);

const isNamespace = (name: string) => name.endsWith('Namespace');
const messageTypes = [...recorder.types.keys()].filter((name) => !isNamespace(name));

/** One file per package, one message per type: `int64 h = 1` (FieldDescriptorProto type 3, label 1). */
function messageRegistry() {
  const byPackage = new Map<string, string[]>();
  for (const full of messageTypes) {
    const dot = full.lastIndexOf('.');
    const pkg = dot < 0 ? '' : full.slice(0, dot);
    byPackage.set(pkg, [...(byPackage.get(pkg) ?? []), full.slice(dot + 1)]);
  }
  const file = [...byPackage].map(([pkg, names], i) => ({
    name: `library${i}.proto`,
    package: pkg,
    syntax: 'proto3',
    messageType: names.map((name) => ({ name, field: [{ name: 'h', jsonName: 'h', number: 1, type: 3, label: 1 }] })),
  }));
  return createFileRegistry(create(FileDescriptorSetSchema, { file } as never));
}

const registry = messageRegistry();
function descriptorOf(name: string): DescMessage {
  const descriptor = registry.getMessage(name);
  if (!descriptor) throw new Error(`no message ${name}`);
  return descriptor;
}

const table = new Map<bigint, unknown>();
const interned = new Map<string, [unknown, bigint][]>();
let nextHandle = 1n;

/** Empties the side table: values of one evaluation are not kept past it. */
export function reset(): void {
  table.clear();
  interned.clear();
}

function libraryTypeOf(value: object): string | undefined {
  return messageTypes.find((name) => value.constructor === recorder.types.get(name)) ?? messageTypes.find((name) => value instanceof recorder.types.get(name)!);
}

function handleFor(type: string, value: object): bigint {
  const equals = recorder.equality.get(type);
  const seen = interned.get(type) ?? [];
  interned.set(type, seen);
  const found = seen.find(([other]) => other === value || (equals?.(other, value) ?? false));
  if (found) return found[1];
  const handle = nextHandle++;
  seen.push([value, handle]);
  table.set(handle, value);
  return handle;
}

const toMillis = (date: Date) => date.getTime();

/** A cel-js value as @bufbuild/cel takes it. */
export function toBuf(value: unknown): unknown {
  if (value === undefined) throw new Error('no value');
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return value;
  if (value instanceof UnsignedInt) return celUint(value.valueOf());
  if (value instanceof Duration) return create(DurationSchema, { seconds: BigInt(value.seconds), nanos: Number(value.nanos) });
  if (value instanceof Date) return create(TimestampSchema, { seconds: BigInt(Math.floor(toMillis(value) / 1000)), nanos: (((toMillis(value) % 1000) + 1000) % 1000) * 1e6 });
  if (Array.isArray(value)) return value.map(toBuf);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, toBuf(v)]));
  const type = libraryTypeOf(value);
  if (type !== undefined) return create(descriptorOf(type), { h: handleFor(type, value) } as never);
  if (value.constructor === Object) return new Map(Object.entries(value).map(([k, v]) => [k, toBuf(v)]));
  throw new Error(`cannot carry a ${value.constructor.name} into @bufbuild/cel`);
}

interface MessageValue {
  message: { $typeName: string; h?: bigint; seconds?: bigint; nanos?: number };
}

/** A @bufbuild/cel value as the library's handlers take it. */
export function fromBuf(value: unknown): unknown {
  if (isCelUint(value)) return new UnsignedInt(value.value);
  if (isCelList(value)) return [...value].map(fromBuf);
  if (isCelMap(value)) {
    const entries = [...value.entries()].map(([k, v]) => [fromBuf(k), fromBuf(v)] as const);
    return entries.every(([k]) => typeof k === 'string') ? Object.fromEntries(entries) : new Map(entries);
  }
  const message = (value as Partial<MessageValue> | null)?.message;
  if (message?.$typeName === 'google.protobuf.Duration') return new Duration(message.seconds!, message.nanos);
  if (message?.$typeName === 'google.protobuf.Timestamp') return new Date(Number(message.seconds) * 1000 + Math.floor(message.nanos! / 1e6));
  if (typeof message?.h === 'bigint') return table.get(message.h);
  return value;
}

const SCALARS: Record<string, CelType> = {
  int: CelScalar.INT,
  uint: CelScalar.UINT,
  double: CelScalar.DOUBLE,
  string: CelScalar.STRING,
  bool: CelScalar.BOOL,
  bytes: CelScalar.BYTES,
  dyn: CelScalar.DYN,
  null_type: CelScalar.NULL,
};

/** The library's type as @bufbuild/cel dispatches on it; a type parameter is dyn. */
function bufType(name: string): CelType {
  if (SCALARS[name]) return SCALARS[name];
  if (name === 'list' || name.startsWith('list<')) return listType(CelScalar.DYN);
  if (name === 'map' || name.startsWith('map<')) return mapType(CelScalar.DYN, CelScalar.DYN);
  if (name === 'timestamp' || name === 'google.protobuf.Timestamp') return objectType(TimestampSchema);
  if (name === 'duration' || name === 'google.protobuf.Duration') return objectType(DurationSchema);
  if (recorder.types.has(name) && !isNamespace(name)) return objectType(descriptorOf(name));
  return CelScalar.DYN;
}

type Impl = (...args: unknown[]) => unknown;

function carried({ receiver, name, params, handler }: Registered): CelFunc {
  const args = params.map(bufType);
  const call = (target: unknown[], values: unknown[]) => toBuf(handler(...target, ...values.map(fromBuf)));
  if (receiver !== undefined && isNamespace(receiver)) {
    // `sets.contains(...)`: a qualified function name in @bufbuild/cel, a method of a namespace constant in cel-js.
    const namespace = receiver.replace(/Namespace$/, '');
    const impl: Impl = (...values) => call([null], values);
    return celFunc(`${namespace[0]!.toLowerCase()}${namespace.slice(1)}.${name}`, args, CelScalar.DYN, impl as never);
  }
  if (receiver !== undefined) {
    const impl = function (this: unknown, ...values: unknown[]) {
      return call([fromBuf(this)], values);
    };
    return celMethod(name, bufType(receiver), args, CelScalar.DYN, impl as never);
  }
  const impl: Impl = (...values) => call([], values);
  return celFunc(name, args, CelScalar.DYN, impl as never);
}

/** @bufbuild/cel with its strings extension and the product's library. */
export const libraryEnv: CelEnv = celEnv({ registry, funcs: [...strings, ...recorder.functions.map(carried)] });

/** What of the library could not be carried. */
export const notCarried: readonly string[] = recorder.notCarried;
