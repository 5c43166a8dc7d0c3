/**
 * Just enough of the TLS 1.2 wire format to offer what OpenSSL-based scanners cannot (DEFLATE
 * compression: Debian's OpenSSL is built without zlib) and to read the server's choice back.
 */
import { randomBytes } from 'node:crypto';

const RECORD_HANDSHAKE = 0x16;
const RECORD_ALERT = 0x15;
const HANDSHAKE_CLIENT_HELLO = 0x01;
const HANDSHAKE_SERVER_HELLO = 0x02;
const TLS12 = 0x0303;
export const COMPRESSION_NULL = 0;
export const COMPRESSION_DEFLATE = 1;
export const EXTENSION_RENEGOTIATION_INFO = 0xff01;

function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value);
  return buffer;
}

function u24(value: number): Buffer {
  return Buffer.from([(value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff]);
}

function vector8(body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([body.length]), body]);
}

function vector16(body: Buffer): Buffer {
  return Buffer.concat([u16(body.length), body]);
}

function u16List(values: readonly number[]): Buffer {
  return Buffer.concat(values.map(u16));
}

function extension(type: number, body: Buffer): Buffer {
  return Buffer.concat([u16(type), vector16(body)]);
}

/** A handshake message in one record (record version TLS 1.0, as clients send their first one). */
export function handshakeRecord(handshakeType: number, body: Buffer): Buffer {
  const message = Buffer.concat([Buffer.from([handshakeType]), u24(body.length), body]);
  return Buffer.concat([Buffer.from([RECORD_HANDSHAKE, 0x03, 0x01]), vector16(message)]);
}

/** ECDHE and RSA suites, AEAD and CBC: a weak server must find something it would pick. */
const OFFERED_SUITES = [0xc02f, 0xc030, 0xcca8, 0xc02b, 0xc02c, 0xcca9, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035];
const OFFERED_GROUPS = [0x001d, 0x0017, 0x0018];
const OFFERED_SIGNATURES = [0x0804, 0x0805, 0x0401, 0x0501, 0x0403, 0x0503, 0x0201];

/**
 * A TLS 1.2 ClientHello (no supported_versions, so TLS 1.3 is not on offer) that offers DEFLATE
 * before null compression and signals RFC 5746 with an empty renegotiation_info extension.
 */
export function compressionClientHello(): Buffer {
  const extensions = Buffer.concat([
    extension(0x000a, vector16(u16List(OFFERED_GROUPS))),
    extension(0x000b, vector8(Buffer.from([0]))),
    extension(0x000d, vector16(u16List(OFFERED_SIGNATURES))),
    extension(EXTENSION_RENEGOTIATION_INFO, vector8(Buffer.alloc(0))),
  ]);
  const body = Buffer.concat([
    u16(TLS12),
    randomBytes(32),
    vector8(Buffer.alloc(0)),
    vector16(u16List(OFFERED_SUITES)),
    vector8(Buffer.from([COMPRESSION_DEFLATE, COMPRESSION_NULL])),
    vector16(extensions),
  ]);
  return handshakeRecord(HANDSHAKE_CLIENT_HELLO, body);
}

export interface ServerHelloFields {
  version: number;
  cipherSuite: number;
  compressionMethod: number;
  extensionTypes: number[];
}

/** A ServerHello with the given choices (for test doubles that play a weak server). */
export function serverHello(fields: ServerHelloFields): Buffer {
  const extensions = Buffer.concat(fields.extensionTypes.map((type) => extension(type, type === EXTENSION_RENEGOTIATION_INFO ? vector8(Buffer.alloc(0)) : Buffer.alloc(0))));
  const body = Buffer.concat([
    u16(fields.version),
    randomBytes(32),
    vector8(Buffer.alloc(0)),
    u16(fields.cipherSuite),
    Buffer.from([fields.compressionMethod]),
    vector16(extensions),
  ]);
  return handshakeRecord(HANDSHAKE_SERVER_HELLO, body);
}

export type FirstServerMessage =
  | { kind: 'incomplete' }
  | { kind: 'alert'; level: number; description: number }
  | { kind: 'server-hello'; hello: ServerHelloFields };

function extensionTypes(block: Buffer): number[] {
  const types: number[] = [];
  for (let at = 0; at + 4 <= block.length; at += 4 + block.readUInt16BE(at + 2)) types.push(block.readUInt16BE(at));
  return types;
}

function parseServerHello(body: Buffer): ServerHelloFields {
  const sessionIdLength = body.readUInt8(34);
  let at = 35 + sessionIdLength;
  const cipherSuite = body.readUInt16BE(at);
  const compressionMethod = body.readUInt8(at + 2);
  at += 3;
  const extensions = at + 2 <= body.length ? body.subarray(at + 2, at + 2 + body.readUInt16BE(at)) : Buffer.alloc(0);
  return { version: body.readUInt16BE(0), cipherSuite, compressionMethod, extensionTypes: extensionTypes(extensions) };
}

/**
 * Reads the server's first record from what has arrived so far: an alert, the ServerHello, or
 * 'incomplete' when more bytes are needed. Anything else is a protocol error.
 */
export function readFirstServerMessage(received: Buffer): FirstServerMessage {
  if (received.length < 5) return { kind: 'incomplete' };
  const recordLength = received.readUInt16BE(3);
  if (received.length < 5 + recordLength) return { kind: 'incomplete' };
  const record = received.subarray(5, 5 + recordLength);
  const recordType = received.readUInt8(0);
  if (recordType === RECORD_ALERT) return { kind: 'alert', level: record.readUInt8(0), description: record.readUInt8(1) };
  if (recordType !== RECORD_HANDSHAKE || record.readUInt8(0) !== HANDSHAKE_SERVER_HELLO) {
    throw new Error(`expected a ServerHello or an alert, got record type ${recordType}`);
  }
  const helloLength = (record.readUInt8(1) << 16) | record.readUInt16BE(2);
  if (record.length < 4 + helloLength) throw new Error('the ServerHello spans several records; this probe reads only one');
  return { kind: 'server-hello', hello: parseServerHello(record.subarray(4, 4 + helloLength)) };
}

/** The compression methods a ClientHello offers (for test doubles). */
export function offeredCompressionMethods(clientHelloRecord: Buffer): number[] {
  const body = clientHelloRecord.subarray(9);
  let at = 34;
  at += 1 + body.readUInt8(at);
  at += 2 + body.readUInt16BE(at);
  return [...body.subarray(at + 1, at + 1 + body.readUInt8(at))];
}
